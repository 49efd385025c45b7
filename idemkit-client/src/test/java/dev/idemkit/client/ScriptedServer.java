package dev.idemkit.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idemkit.client.internal.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * A tiny HTTP server for unit tests: answers each request with the next scripted reply (the last
 * one repeats) and records every attempt, its {@code Idempotency-Key} header exactly as sent.
 */
final class ScriptedServer implements AutoCloseable {

  /** One scripted answer. */
  record Reply(int status, Map<String, String> headers, String body, Duration delay) {

    static Reply of(int status) {
      return new Reply(status, Map.of(), "", Duration.ZERO);
    }

    static Reply created(String body) {
      return json(201, body);
    }

    static Reply json(int status, String body) {
      return new Reply(status, Map.of("Content-Type", "application/json"), body, Duration.ZERO);
    }

    /** An RFC 9457 problem, shaped like the Idemkit server's. */
    static Reply problem(int status, String errorCode, String detail) {
      String body =
          "{\"detail\":"
              + Json.quote(detail)
              + ",\"errorCode\":\""
              + errorCode
              + "\",\"status\":"
              + status
              + ",\"title\":\"Problem\",\"type\":\"urn:problem-type:idemkit:x\"}";
      return new Reply(
          status, Map.of("Content-Type", "application/problem+json"), body, Duration.ZERO);
    }

    Reply header(String name, String value) {
      Map<String, String> h = new LinkedHashMap<>(headers);
      h.put(name, value);
      return new Reply(status, h, body, delay);
    }

    Reply delayed(Duration d) {
      return new Reply(status, headers, body, d);
    }
  }

  /** One request as the server saw it. */
  record Attempt(
      String method,
      String path,
      String key,
      String authorization,
      String contentType,
      String body) {}

  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final Map<String, Deque<Reply>> scripts = new LinkedHashMap<>();
  private final List<Attempt> attempts = new CopyOnWriteArrayList<>();
  private volatile Consumer<Attempt> onRequest = a -> {};

  private ScriptedServer(int port) {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  static ScriptedServer start() {
    return new ScriptedServer(0);
  }

  static ScriptedServer startOn(int port) {
    return new ScriptedServer(port);
  }

  /** Scripts the replies of one path, in order; the last one repeats. */
  synchronized ScriptedServer on(String path, Reply... replies) {
    scripts.put(path, new ArrayDeque<>(List.of(replies)));
    return this;
  }

  /** Runs before each reply, on the server's thread. */
  ScriptedServer onRequest(Consumer<Attempt> hook) {
    this.onRequest = hook;
    return this;
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  List<Attempt> attempts() {
    return List.copyOf(attempts);
  }

  List<Attempt> attempts(String path) {
    return attempts.stream().filter(a -> a.path().equals(path)).collect(Collectors.toList());
  }

  List<String> keys(String path) {
    return attempts(path).stream().map(Attempt::key).collect(Collectors.toList());
  }

  private synchronized Reply next(String path) {
    Deque<Reply> script = scripts.get(path);
    if (script == null || script.isEmpty()) {
      return Reply.of(404);
    }
    return script.size() > 1 ? script.poll() : script.peek();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      Attempt attempt =
          new Attempt(
              exchange.getRequestMethod(),
              path,
              exchange.getRequestHeaders().getFirst("Idempotency-Key"),
              exchange.getRequestHeaders().getFirst("Authorization"),
              exchange.getRequestHeaders().getFirst("Content-Type"),
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
      attempts.add(attempt);
      onRequest.accept(attempt);
      Reply reply = next(path);
      if (!reply.delay().isZero()) {
        try {
          Thread.sleep(reply.delay().toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      reply.headers().forEach((n, v) -> exchange.getResponseHeaders().add(n, v));
      byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(reply.status(), body.length == 0 ? -1 : body.length);
      if (body.length > 0) {
        exchange.getResponseBody().write(body);
      }
    } catch (IOException e) {
      // The client gave up (timeout) before the answer: that is what some tests want.
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
