package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * No byte of a body is read before the gate has authenticated the request and applied its size
 * limit, whatever the method and content type: a client announces a 200 MB form body, sends 1 MB of
 * it, and has its refusal before it sends the rest. A body that were read first would have to
 * arrive whole (and a few hundred megabytes of form ended the heap).
 */
class GateBeforeBodyIT extends HttpTestSupport {

  private static final long ANNOUNCED = 200L * 1024 * 1024;
  private static final int SENT_BEFORE_READING = 1024 * 1024;

  @ParameterizedTest(name = "{0} {1} with key {2}: {3}")
  @CsvSource({
    "DELETE, /v1/payments, , 401",
    "PATCH, /v1/payments, , 401",
    "PUT, /v1/orders, , 401",
    "POST, /v1/payments, , 401",
    "PATCH, /v1/admin/idempotency/records, , 401",
    "DELETE, /v1/payments, sk_test_demo_a, 413",
    "PATCH, /v1/payments, sk_test_demo_a, 413",
    "PUT, /v1/orders, sk_test_demo_a, 413",
    "POST, /v1/payments, sk_test_demo_a, 413",
  })
  void aLargeFormBodyIsRefusedBeforeItIsSent(String method, String path, String apiKey, int status)
      throws Exception {
    String head =
        method
            + " "
            + path
            + " HTTP/1.1\r\nHost: localhost\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\n"
            + "Content-Length: "
            + ANNOUNCED
            + "\r\n"
            + (apiKey == null ? "" : "Authorization: Bearer " + apiKey + "\r\n")
            + "\r\n";
    Exchange exchange = send(head.getBytes(StandardCharsets.US_ASCII), false);

    assertThat(exchange.status()).isEqualTo(status);
    assertThat(exchange.contentType()).startsWith("application/problem+json");
    assertThat(exchange.bodySent())
        .as("refused after 1 MB of the 200 MB body, not once the body was read")
        .isLessThan(ANNOUNCED / 4);
  }

  @ParameterizedTest(name = "chunked {0} with key {1}: {2}")
  @CsvSource({
    "DELETE, , 401",
    "PATCH, , 401",
    "PATCH, sk_test_demo_a, 413",
    "POST, sk_test_demo_a, 413",
  })
  void aChunkedFormBodyWithNoLengthIsRefusedBeforeItEnds(String method, String apiKey, int status)
      throws Exception {
    String head =
        method
            + " /v1/payments HTTP/1.1\r\nHost: localhost\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\n"
            + "Transfer-Encoding: chunked\r\n"
            + (apiKey == null ? "" : "Authorization: Bearer " + apiKey + "\r\n")
            + "\r\n";
    Exchange exchange = send(head.getBytes(StandardCharsets.US_ASCII), true);

    // A body with no declared length is refused for its size as it grows (413), or for the
    // method or type before a byte of it is read (405, 415); never read to its end.
    assertThat(exchange.status()).isIn(status, 405, 415);
    if (apiKey == null) {
      assertThat(exchange.status()).isEqualTo(401);
    }
    assertThat(exchange.contentType()).startsWith("application/problem+json");
    assertThat(exchange.bodySent()).isLessThan(ANNOUNCED / 4);
  }

  /** What came back, and how much of the body had gone out when it did. */
  record Exchange(int status, String contentType, long bodySent) {}

  /**
   * Sends {@code head}, then the body (form bytes, chunked or not) in 64 kB pieces while a reader
   * waits for the answer; after the first megabyte, stops as soon as the answer is in (or the
   * server closed the connection on the unread rest).
   */
  private Exchange send(byte[] head, boolean chunked) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(60_000);
      InputStream in = socket.getInputStream();
      CompletableFuture<byte[]> answer =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return readHead(in);
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              });
      OutputStream out = socket.getOutputStream();
      out.write(head);
      byte[] piece = new byte[64 * 1024];
      Arrays.fill(piece, (byte) 'a');
      long sent = 0;
      try {
        while (sent < ANNOUNCED && (sent < SENT_BEFORE_READING || !answer.isDone())) {
          if (chunked) {
            out.write(
                (Integer.toHexString(piece.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(piece);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          } else {
            out.write(piece);
          }
          sent += piece.length;
        }
        out.flush();
      } catch (IOException closedOnTheRest) {
        // The server answered and closed rather than read the rest: what it should do.
      }
      String response = new String(answer.get(60, TimeUnit.SECONDS), StandardCharsets.ISO_8859_1);
      int status = Integer.parseInt(response.split(" ", 3)[1]);
      String contentType = "";
      for (String line : response.split("\r\n")) {
        if (line.regionMatches(true, 0, "Content-Type:", 0, 13)) {
          contentType = line.substring(13).trim();
        }
      }
      return new Exchange(status, contentType, sent);
    }
  }

  /** The status line and headers of the answer. */
  private static byte[] readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      byte[] soFar = head.toByteArray();
      int n = soFar.length;
      if (n >= 4
          && soFar[n - 4] == '\r'
          && soFar[n - 3] == '\n'
          && soFar[n - 2] == '\r'
          && soFar[n - 1] == '\n') {
        return soFar;
      }
    }
    throw new IOException("connection closed before an answer: " + head);
  }
}
