package dev.idemkit.conformance;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small transfers API ({@code POST /transfers}, {@code GET /effects?ref=R}) whose first request
 * is slow in the way that makes the in-flight checks decide: the transfer runs only once a
 * duplicate of it has arrived (or after {@link #HOLD_MILLIS}), so the duplicate always meets it
 * running. {@link Duplicate} says what the duplicate then gets.
 */
final class TransfersApi implements AutoCloseable {

  /** How long a transfer waits for its duplicate before it runs anyway (a request with none). */
  static final long HOLD_MILLIS = 1000;

  /** What a duplicate of a running transfer gets. */
  enum Duplicate {
    /**
     * Correct: the duplicate waits for the running transfer and gets its answer, replayed byte for
     * byte. The first request's own answer leaves after it: the transfer does its post-commit work
     * (300 ms) after it has woken the waiting duplicate, as a server may. Answers on two
     * connections arrive in either order.
     */
    WAITS_AND_REPLAYS,
    /** Correct: the duplicate gets the draft's 409 in-progress problem with Retry-After. */
    IN_PROGRESS,
    /** Broken: the key is stored only when a transfer completes, so the duplicate runs again. */
    RUNS_AGAIN
  }

  private static final class Transfer {
    final String fingerprint;
    final CountDownLatch duplicateArrived = new CountDownLatch(1);
    final CountDownLatch completed = new CountDownLatch(1);
    final CountDownLatch duplicateAnswered = new CountDownLatch(1);
    volatile String id;
    volatile byte[] body;

    Transfer(String fingerprint) {
      this.fingerprint = fingerprint;
    }
  }

  private final Duplicate duplicate;
  private final HttpServer server;
  private final ExecutorService pool = Executors.newFixedThreadPool(16);
  private final Map<String, Transfer> transfers = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();

  TransfersApi(Duplicate duplicate) throws IOException {
    this.duplicate = duplicate;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 32);
    server.setExecutor(pool);
    server.createContext("/", this::handle);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange ex) throws IOException {
    Transfer answeredFor = null;
    try (ex) {
      answeredFor = answer(ex);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      // The exchange is closed: the duplicate's whole answer is on its way.
      if (answeredFor != null) {
        answeredFor.duplicateAnswered.countDown();
      }
    }
  }

  /** Answers; returns the running transfer whose duplicate this request was, if it was one. */
  private Transfer answer(HttpExchange ex) throws IOException, InterruptedException {
    String path = ex.getRequestURI().getPath();
    if ("GET".equals(ex.getRequestMethod()) && path.equals("/effects")) {
      String ref = ex.getRequestURI().getQuery().substring("ref=".length());
      send(ex, 200, "{\"count\":" + effects.getOrDefault(ref, new AtomicInteger()).get() + "}");
      return null;
    }
    if (!"POST".equals(ex.getRequestMethod()) || !path.equals("/transfers")) {
      send(ex, 404, "{\"error\":\"not found\"}");
      return null;
    }
    String principal = ex.getRequestHeaders().getFirst("Authorization");
    List<String> keys = ex.getRequestHeaders().get("Idempotency-Key");
    if (principal == null) {
      send(ex, 401, "{\"error\":\"unauthenticated\"}");
      return null;
    }
    String key = keys == null || keys.size() != 1 ? null : key(keys.get(0));
    if (key == null) {
      send(ex, 400, "{\"errorCode\":\"IDEMPOTENCY_KEY_INVALID\"}");
      return null;
    }
    String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    String ref = body.replaceAll(".*\"ref\"\\s*:\\s*\"([^\"]*)\".*", "$1");
    Transfer mine = new Transfer(body);
    String scope = principal + "|" + key;
    Transfer running =
        duplicate == Duplicate.RUNS_AGAIN
            ? completedOrNull(transfers.get(scope))
            : transfers.putIfAbsent(scope, mine);
    if (running != null) {
      running.duplicateArrived.countDown();
      if (!running.fingerprint.equals(body)) {
        send(ex, 422, "{\"errorCode\":\"IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST\"}");
      } else if (duplicate == Duplicate.IN_PROGRESS && running.completed.getCount() > 0) {
        ex.getResponseHeaders().add("Retry-After", "1");
        ex.getResponseHeaders().add("Content-Type", "application/problem+json");
        byte[] problem =
            "{\"status\":409,\"errorCode\":\"IDEMPOTENCY_REQUEST_IN_PROGRESS\"}"
                .getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(409, problem.length);
        ex.getResponseBody().write(problem);
      } else if (running.completed.await(10, TimeUnit.SECONDS)) {
        ex.getResponseHeaders().add("Location", "/transfers/" + running.id);
        send(ex, 201, running.body);
      } else {
        send(ex, 503, "{\"error\":\"the first request did not finish\"}");
      }
      return running;
    }
    boolean met = mine.duplicateArrived.await(HOLD_MILLIS, TimeUnit.MILLISECONDS);
    if (met && duplicate == Duplicate.IN_PROGRESS) {
      // Still running while the duplicate is told so.
      mine.duplicateAnswered.await(HOLD_MILLIS, TimeUnit.MILLISECONDS);
    }
    effects.computeIfAbsent(ref, r -> new AtomicInteger()).incrementAndGet();
    mine.id = "tr_" + ids.incrementAndGet();
    mine.body =
        ("{\"id\":\"" + mine.id + "\",\"ref\":\"" + ref + "\"}").getBytes(StandardCharsets.UTF_8);
    mine.completed.countDown();
    if (duplicate == Duplicate.RUNS_AGAIN) {
      transfers.put(scope, mine);
    }
    if (met && duplicate == Duplicate.WAITS_AND_REPLAYS) {
      // Post-commit work after the waiting duplicate was woken: its replay leaves first.
      mine.duplicateAnswered.await(HOLD_MILLIS, TimeUnit.MILLISECONDS);
      Thread.sleep(300);
    }
    ex.getResponseHeaders().add("Location", "/transfers/" + mine.id);
    send(ex, 201, mine.body);
    return null;
  }

  private static Transfer completedOrNull(Transfer t) {
    return t != null && t.completed.getCount() == 0 ? t : null;
  }

  /** The draft's sf-string, or a bare token; null when malformed. */
  private static String key(String header) {
    String v = header.trim();
    if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
      v = v.substring(1, v.length() - 1);
    }
    return !v.isEmpty() && v.length() <= 255 && v.chars().allMatch(c -> c > 0x20 && c < 0x7f)
        ? v
        : null;
  }

  private static void send(HttpExchange ex, int status, String body) throws IOException {
    send(ex, status, body.getBytes(StandardCharsets.UTF_8));
  }

  private static void send(HttpExchange ex, int status, byte[] body) throws IOException {
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, body.length);
    ex.getResponseBody().write(body);
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
