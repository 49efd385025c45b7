package dev.idemkit.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An answer whose headers arrive and whose body then stalls (a server or proxy that hangs mid-way)
 * is a timed-out attempt like any other: the request timeout covers the whole answer, so the
 * operation is retried with the same key and stays within its deadline instead of hanging.
 */
class StalledAnswerTest {

  private static final String PATH = "/v1/payments";
  private static final String BODY = "{\"amount\":\"10.00\",\"currency\":\"EUR\"}";
  private static final String ANSWER = "{\"paymentId\":\"p1\"}";

  private final StallingServer server = new StallingServer();

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  @Test
  void aBodyThatStallsAfterTheHeadersIsATimeoutRetriedWithTheSameKey() {
    server.stallFirst(1);
    IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(server.uri())
            .requestTimeout(Duration.ofMillis(500))
            .retryPolicy(RetryPolicy.builder().maxAttempts(3).build())
            .sleeper(d -> {})
            .build();

    IdempotentResponse r =
        assertTimeoutPreemptively(
            Duration.ofSeconds(10), () -> client.post(PATH).json(BODY).send());

    assertThat(r.status()).isEqualTo(201);
    assertThat(r.bodyAsString()).isEqualTo(ANSWER);
    assertThat(r.attempts()).isEqualTo(2);
    assertThat(server.keys).hasSize(2).containsOnly(r.key());
    assertThat(server.bodies).containsOnly(BODY);
  }

  @Test
  void bodiesThatAlwaysStallEndAsRetriesExhaustedWithinTheDeadline() {
    server.stallFirst(Integer.MAX_VALUE);
    IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(server.uri())
            .requestTimeout(Duration.ofMillis(300))
            .retryPolicy(RetryPolicy.builder().maxAttempts(2).build())
            .sleeper(d -> {})
            .build();

    assertTimeoutPreemptively(
        Duration.ofSeconds(10),
        () ->
            assertThatThrownBy(() -> client.post(PATH).key("order-9").json(BODY).send())
                .isInstanceOfSatisfying(
                    RetriesExhaustedException.class,
                    e -> {
                      assertThat(e.attempts()).isEqualTo(2);
                      assertThat(e.key()).hasValue("order-9");
                    })
                .hasCauseInstanceOf(HttpTimeoutException.class));
    assertThat(server.keys).containsExactly("order-9", "order-9");
  }

  @Test
  void anInterruptWhileAnAnswerStallsEndsTheOperationAtOnce() throws Exception {
    server.stallFirst(Integer.MAX_VALUE);
    IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(server.uri())
            .requestTimeout(Duration.ofSeconds(30))
            .build();
    Thread caller = Thread.currentThread();
    Thread interrupter =
        new Thread(
            () -> {
              while (server.keys.isEmpty()) {
                Thread.onSpinWait();
              }
              caller.interrupt();
            });
    interrupter.start();

    assertThatThrownBy(() -> client.post(PATH).key("order-10").json(BODY).send())
        .isInstanceOfSatisfying(
            OperationInterruptedException.class,
            e -> {
              assertThat(e.attempts()).isEqualTo(1);
              assertThat(e.key()).hasValue("order-10");
            });
    assertThat(Thread.interrupted()).isTrue();
    interrupter.join();
    assertThat(server.keys).containsExactly("order-10");
  }

  /** Answers the first {@code n} requests with headers and half a body, then nothing more. */
  private static final class StallingServer implements AutoCloseable {
    final List<String> keys = new CopyOnWriteArrayList<>();
    final List<String> bodies = new CopyOnWriteArrayList<>();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final AtomicInteger stalls = new AtomicInteger();
    private final ServerSocket socket;

    StallingServer() {
      try {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      Thread acceptor = new Thread(this::accept, "stalling-server");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    void stallFirst(int n) {
      stalls.set(n);
    }

    URI uri() {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort());
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          Socket client = socket.accept();
          open.add(client);
          Thread t = new Thread(() -> serve(client), "stalling-server-conn");
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    private void serve(Socket client) {
      try {
        InputStream in = client.getInputStream();
        OutputStream out = client.getOutputStream();
        while (true) {
          String head = readHead(in);
          if (head == null) {
            return;
          }
          int length = 0;
          String key = null;
          for (String line : head.split("\r\n")) {
            String lower = line.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
              length = Integer.parseInt(line.substring(15).trim());
            } else if (lower.startsWith("idempotency-key:")) {
              key = line.substring(16).trim();
            }
          }
          bodies.add(new String(in.readNBytes(length), StandardCharsets.UTF_8));
          keys.add(key);
          byte[] answer = ANSWER.getBytes(StandardCharsets.UTF_8);
          String headers =
              "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: "
                  + answer.length
                  + "\r\n\r\n";
          out.write(headers.getBytes(StandardCharsets.US_ASCII));
          if (stalls.getAndDecrement() > 0) {
            out.write(answer, 0, 3);
            out.flush();
            // Never sends the rest, never closes: the answer hangs mid-body.
            return;
          }
          out.write(answer);
          out.flush();
        }
      } catch (IOException e) {
        // The client gave up on this connection.
      }
    }

    private static String readHead(InputStream in) throws IOException {
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      int matched = 0;
      byte[] end = {'\r', '\n', '\r', '\n'};
      while (matched < 4) {
        int b = in.read();
        if (b < 0) {
          return null;
        }
        head.write(b);
        matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
      }
      return head.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
      socket.close();
      for (Socket s : open) {
        s.close();
      }
    }
  }
}
