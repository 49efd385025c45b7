package dev.idemkit.examples.payments;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 written byte for byte over a socket: the request target goes out exactly as given, with
 * no client normalizing {@code ..}, refusing a backslash or re-encoding anything.
 */
final class RawHttp {

  private RawHttp() {}

  /** A response as received. */
  record Reply(int status, Map<String, List<String>> headers, String body) {
    String header(String name) {
      List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
      return values == null || values.isEmpty() ? null : values.get(0);
    }
  }

  /**
   * Sends {@code method target HTTP/1.1} with the given header lines (without CRLF) and body, and
   * reads the whole answer ({@code Connection: close}).
   */
  static Reply exchange(int port, String method, String target, List<String> headers, byte[] body) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(30_000);
      ByteArrayOutputStream request = new ByteArrayOutputStream();
      request.writeBytes(ascii(method + " " + target + " HTTP/1.1\r\n"));
      request.writeBytes(ascii("Host: localhost:" + port + "\r\n"));
      for (String line : headers) {
        request.writeBytes(ascii(line + "\r\n"));
      }
      if (body != null) {
        request.writeBytes(ascii("Content-Length: " + body.length + "\r\n"));
      }
      request.writeBytes(ascii("Connection: close\r\n\r\n"));
      if (body != null) {
        request.writeBytes(body);
      }
      socket.getOutputStream().write(request.toByteArray());
      socket.getOutputStream().flush();
      return parse(socket.getInputStream().readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Reply parse(byte[] bytes) throws IOException {
    String all = new String(bytes, StandardCharsets.ISO_8859_1);
    int end = all.indexOf("\r\n\r\n");
    if (end < 0) {
      throw new IOException("no complete response head in: " + all);
    }
    String[] lines = all.substring(0, end).split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers
          .computeIfAbsent(
              lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), n -> new ArrayList<>())
          .add(lines[i].substring(colon + 1).trim());
    }
    byte[] body = Arrays.copyOfRange(bytes, end + 4, bytes.length);
    List<String> encoding = headers.get("transfer-encoding");
    if (encoding != null && encoding.get(0).equalsIgnoreCase("chunked")) {
      body = dechunk(new ByteArrayInputStream(body));
    }
    return new Reply(status, headers, new String(body, StandardCharsets.UTF_8));
  }

  private static byte[] dechunk(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (true) {
      StringBuilder size = new StringBuilder();
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          return out.toByteArray();
        }
        if (c != '\r') {
          size.append((char) c);
        }
      }
      int semicolon = size.indexOf(";");
      String hex = semicolon < 0 ? size.toString() : size.substring(0, semicolon);
      int n = Integer.parseInt(hex.trim(), 16);
      if (n == 0) {
        return out.toByteArray();
      }
      out.writeBytes(in.readNBytes(n));
      in.readNBytes(2);
    }
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }
}
