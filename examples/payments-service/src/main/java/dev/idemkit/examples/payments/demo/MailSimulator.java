package dev.idemkit.examples.payments.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * A mail service that behaves like a real one: idempotent per {@code Idempotency-Key} (a key it has
 * accepted is answered again, never mailed again), and failing on request. On loopback.
 *
 * <ul>
 *   <li>{@code POST /messages} with {@code Idempotency-Key}: 202 (sent) or 200 (that key was sent
 *       before: nothing sent again);
 *   <li>{@code GET /messages?key=K}: {@code {"delivered": n, "requests": m}}: mails really sent
 *       under K (0 or 1 if senders pass their key), and requests received for K;
 *   <li>faults, at random with the configured probabilities or for the next requests ({@link
 *       #failNext}): {@code drop-after-accept} (the mail is sent, the connection closes before any
 *       answer) and {@code unavailable} (503, nothing sent).
 * </ul>
 */
public final class MailSimulator implements AutoCloseable {

  /** What the simulator can do wrong. */
  public enum Fault {
    DROP_AFTER_ACCEPT("drop-after-accept"),
    UNAVAILABLE("unavailable");

    private final String wireName;

    Fault(String wireName) {
      this.wireName = wireName;
    }

    static Fault fromWireName(String name) {
      for (Fault f : values()) {
        if (f.wireName.equals(name.trim())) {
          return f;
        }
      }
      throw new IllegalArgumentException("Unknown mail fault " + name);
    }
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final DataSource dataSource;
  private final JsonMapper json;
  private final Map<Fault, Double> probabilities = new ConcurrentHashMap<>();
  private final Map<Fault, AtomicInteger> forced = new ConcurrentHashMap<>();

  private static final String SCHEMA =
      """
      create table if not exists mail_message (
          idempotency_key text        primary key,
          payload         text        not null,
          requests        integer     not null,
          sent_at         timestamptz not null default now()
      )""";

  /**
   * Counts the request and sends the mail if the key is new: one statement decides, so racing
   * requests with one key send one mail.
   */
  private static final String ACCEPT =
      """
      insert into mail_message as m (idempotency_key, payload, requests) values (?, ?, 1)
      on conflict (idempotency_key) do update set requests = m.requests + 1
      returning m.requests = 1
      """;

  private MailSimulator(HttpServer server, String faults, DataSource dataSource, JsonMapper json) {
    this.server = server;
    this.dataSource = dataSource;
    this.json = json;
    if (faults != null && !faults.isBlank()) {
      for (String part : faults.split(",")) {
        String[] kv = part.split(":");
        probabilities.put(Fault.fromWireName(kv[0]), Double.parseDouble(kv[1].trim()));
      }
    }
  }

  /**
   * Starts on 127.0.0.1:{@code port} (0: any free port), with random {@code faults}, keeping what
   * it sent in {@code dataSource}.
   */
  public static MailSimulator start(int port, String faults, DataSource dataSource, JsonMapper json)
      throws IOException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(SCHEMA);
    } catch (SQLException e) {
      throw new IllegalStateException("Could not create the mail simulator's table", e);
    }
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
    MailSimulator sim = new MailSimulator(server, faults, dataSource, json);
    server.createContext("/messages", sim::route);
    server.setExecutor(sim.executor);
    server.start();
    return sim;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** The next {@code times} requests fail with {@code fault}. */
  public void failNext(Fault fault, int times) {
    forced.computeIfAbsent(fault, f -> new AtomicInteger()).addAndGet(times);
  }

  /** Mails really sent under {@code key}: 0 or 1. */
  public int delivered(String key) {
    return requests(key) > 0 ? 1 : 0;
  }

  /** Requests accepted under {@code key} (the 503s refused before accepting are not counted). */
  public int requests(String key) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("select requests from mail_message where idempotency_key = ?")) {
      s.setString(1, key);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getInt(1) : 0;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private void route(HttpExchange exchange) throws IOException {
    try {
      if ("POST".equals(exchange.getRequestMethod())) {
        send(exchange);
      } else if ("GET".equals(exchange.getRequestMethod())) {
        String query = exchange.getRequestURI().getRawQuery();
        String key =
            query != null && query.startsWith("key=")
                ? URLDecoder.decode(query.substring(4), StandardCharsets.UTF_8)
                : null;
        if (key == null) {
          answer(exchange, 400, Map.of("error", "key_required"));
        } else {
          answer(exchange, 200, Map.of("delivered", delivered(key), "requests", requests(key)));
        }
      } else {
        answer(exchange, 405, Map.of("error", "method_not_allowed"));
      }
    } finally {
      exchange.close();
    }
  }

  private void send(HttpExchange exchange) throws IOException {
    String payload = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
    if (key == null || key.isBlank()) {
      answer(exchange, 400, Map.of("error", "idempotency_key_required"));
      return;
    }
    if (fault(Fault.UNAVAILABLE)) {
      answer(exchange, 503, Map.of("error", "unavailable"));
      return;
    }
    // One mail per key: the first request under a key sends it, later ones only answer.
    boolean first;
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement(ACCEPT)) {
      s.setString(1, key);
      s.setString(2, payload);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        first = rs.getBoolean(1);
      }
    } catch (SQLException e) {
      answer(exchange, 500, Map.of("error", "internal"));
      return;
    }
    if (fault(Fault.DROP_AFTER_ACCEPT)) {
      return; // closed without a byte of answer: the sender cannot know the mail went out
    }
    answer(exchange, first ? 202 : 200, Map.of("key", key, "status", "SENT"));
  }

  private boolean fault(Fault f) {
    AtomicInteger n = forced.get(f);
    if (n != null && n.getAndUpdate(v -> v > 0 ? v - 1 : 0) > 0) {
      return true;
    }
    Double p = probabilities.get(f);
    return p != null && ThreadLocalRandom.current().nextDouble() < p;
  }

  private void answer(HttpExchange exchange, int status, Map<String, ?> body) throws IOException {
    byte[] bytes = json.writeValueAsBytes(new TreeMap<>(body));
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
