package dev.idemkit.conformance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A deliberately small HTTP/1.1 client on a plain socket. The checker needs what {@code
 * java.net.http} forbids or hides: two {@code Idempotency-Key} headers, control characters in a
 * header value, the exact body bytes of an answer, and a request held back by its last byte so that
 * N of them reach the server at once. Every request is sent with {@code Connection: close}, so an
 * answer ends where the stream ends.
 */
final class RawHttp {

  private RawHttp() {}

  /**
   * A request; {@code headers} may name a header twice. Its {@code Host} is the URI's unless {@code
   * headers} names one (a request sent through a proxy keeps the server's).
   */
  record Request(String method, URI uri, List<Map.Entry<String, String>> headers, byte[] body) {

    /** The bytes on the wire. */
    byte[] bytes() {
      String target =
          uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
      if (uri.getRawQuery() != null) {
        target += "?" + uri.getRawQuery();
      }
      StringBuilder head = new StringBuilder();
      head.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
      if (headers.stream().noneMatch(h -> h.getKey().equalsIgnoreCase("Host"))) {
        head.append("Host: ").append(host(uri)).append("\r\n");
      }
      for (Map.Entry<String, String> h : headers) {
        head.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
      }
      if (body.length > 0 || !"GET".equals(method)) {
        head.append("Content-Length: ").append(body.length).append("\r\n");
      }
      head.append("Connection: close\r\n\r\n");
      // ISO-8859-1 sends each char < 256 as one byte, so a control character goes out as it is.
      byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
      byte[] all = Arrays.copyOf(h, h.length + body.length);
      System.arraycopy(body, 0, all, h.length, body.length);
      return all;
    }
  }

  /** An answer: status, headers in arrival order, and the body bytes (de-chunked). */
  record Response(int status, List<Map.Entry<String, String>> headers, byte[] body, long nanos) {

    Optional<String> header(String name) {
      return headers.stream()
          .filter(h -> h.getKey().equalsIgnoreCase(name))
          .map(Map.Entry::getValue)
          .findFirst();
    }

    String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }

    boolean success() {
      return status >= 200 && status < 300;
    }

    /** One line for a report: status, the error code if any, and the start of the body. */
    String summary() {
      String text = bodyText().replaceAll("\\s+", " ");
      return status + " " + (text.length() > 160 ? text.substring(0, 160) + "…" : text);
    }
  }

  /** The {@code Host} header's value for {@code uri}: {@code host:port}. */
  static String host(URI uri) {
    return uri.getHost() + ':' + port(uri);
  }

  static int port(URI uri) {
    return uri.getPort() > 0 ? uri.getPort() : ("https".equals(uri.getScheme()) ? 443 : 80);
  }

  /** Sends one request and reads its whole answer. */
  static Response send(Request request, Duration timeout) throws IOException {
    try (Socket socket = open(request.uri(), timeout)) {
      long start = System.nanoTime();
      OutputStream out = socket.getOutputStream();
      out.write(request.bytes());
      out.flush();
      return read(socket.getInputStream(), start);
    }
  }

  static Socket open(URI uri, Duration timeout) throws IOException {
    if (!"http".equals(uri.getScheme())) {
      throw new IOException("only http:// URLs are supported: " + uri);
    }
    Socket socket = new Socket();
    socket.setTcpNoDelay(true);
    socket.connect(new InetSocketAddress(uri.getHost(), port(uri)), (int) timeout.toMillis());
    socket.setSoTimeout((int) timeout.toMillis());
    return socket;
  }

  /** Reads an answer that ends with the stream ({@code Connection: close}). */
  static Response read(InputStream in, long startNanos) throws IOException {
    byte[] all = in.readAllBytes();
    return parse(all, startNanos);
  }

  static Response parse(byte[] all, long startNanos) throws IOException {
    int end = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), 0);
    if (end < 0) {
      throw new IOException(
          all.length == 0
              ? "the connection closed without an answer"
              : "an answer without a complete header (" + all.length + " bytes)");
    }
    String[] lines = new String(all, 0, end, StandardCharsets.ISO_8859_1).split("\r\n");
    String[] statusLine = lines[0].split(" ", 3);
    if (statusLine.length < 2 || !statusLine[0].startsWith("HTTP/")) {
      throw new IOException("not an HTTP answer: " + lines[0]);
    }
    int status = number(statusLine[1], 10, "status code", lines[0]);
    if (statusLine[1].length() != 3) {
      throw new IOException("not an HTTP answer (a status code has three digits): " + lines[0]);
    }
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.add(
            Map.entry(lines[i].substring(0, colon).trim(), lines[i].substring(colon + 1).trim()));
      }
    }
    byte[] rest = Arrays.copyOfRange(all, end + 4, all.length);
    boolean chunked =
        headers.stream()
            .anyMatch(
                h ->
                    h.getKey().equalsIgnoreCase("Transfer-Encoding")
                        && h.getValue().toLowerCase(Locale.ROOT).contains("chunked"));
    byte[] body = chunked ? dechunk(rest) : rest;
    Optional<String> length =
        headers.stream()
            .filter(h -> h.getKey().equalsIgnoreCase("Content-Length"))
            .map(Map.Entry::getValue)
            .findFirst();
    if (!chunked && length.isPresent()) {
      int n = number(length.get().trim(), 10, "Content-Length", length.get());
      if (n < body.length) {
        body = Arrays.copyOf(body, n);
      } else if (n > body.length) {
        throw new IOException("the answer ended after " + body.length + " of " + n + " bytes");
      }
    }
    return new Response(status, List.copyOf(headers), body, System.nanoTime() - startNanos);
  }

  private static byte[] dechunk(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int at = 0;
    while (true) {
      int lineEnd = indexOf(data, new byte[] {'\r', '\n'}, at);
      if (lineEnd < 0) {
        throw new IOException("a chunked answer ended early");
      }
      String size = new String(data, at, lineEnd - at, StandardCharsets.ISO_8859_1);
      int semicolon = size.indexOf(';');
      int n =
          number(
              (semicolon < 0 ? size : size.substring(0, semicolon)).trim(), 16, "chunk size", size);
      at = lineEnd + 2;
      if (n == 0) {
        return out.toByteArray();
      }
      if (at + n > data.length) {
        throw new IOException("a chunked answer ended early");
      }
      out.write(data, at, n);
      at += n + 2;
    }
  }

  /**
   * A number the server sent ({@code what}, in {@code line}), in {@code radix}: anything but a
   * non-negative int is a malformed answer, an {@link IOException} like any other, never a {@link
   * NumberFormatException} out of the checker.
   */
  private static int number(String text, int radix, String what, String line) throws IOException {
    try {
      int n = Integer.parseInt(text, radix);
      if (n >= 0 && !text.startsWith("+") && !text.startsWith("-")) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IOException("not an HTTP answer (a malformed " + what + "): " + line);
  }

  static int indexOf(byte[] data, byte[] pattern, int from) {
    outer:
    for (int i = from; i <= data.length - pattern.length; i++) {
      for (int j = 0; j < pattern.length; j++) {
        if (data[i + j] != pattern[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
