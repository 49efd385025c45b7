package dev.idemkit.examples.provider;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.InvalidIdempotencyKeyException;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitSchema;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * A payment provider that fails in every realistic way, on loopback. It is idempotent the way a
 * real provider is, with Idemkit itself: {@code POST /charges} with an {@code Idempotency-Key}
 * charges at most once per key and replays its answer.
 *
 * <ul>
 *   <li>{@code POST /charges} {@code {"amount":"10.00","currency":"EUR","reference":"..."}} with
 *       {@code Idempotency-Key}: 201 {@code {"chargeId","status":"SUCCEEDED",...}}, or 402 {@code
 *       {"status":"DECLINED"}};
 *   <li>{@code GET /charges?idempotencyKey=K}: the charge made under K (200), none (404), or 503
 *       while lookups of K are down (the fault {@code lookup-unavailable} on the charge under K);
 *   <li>{@code GET /charges}: what was really charged ({@link Charges}): the charges, newest first
 *       (at most {@code limit}, default {@value #DEFAULT_LIST_LIMIT}, up to {@value
 *       #MAX_LIST_LIMIT}), each with its id, merchant, idempotency key, reference, amount,
 *       currency, status and time, and a {@code summary} counting all of them ({@code
 *       "succeeded","declined","distinctReferences","duplicateReferences"}); {@code GET
 *       /charges?reference=R}: the same for one reference.
 * </ul>
 *
 * <p>Faults ({@link Fault}) are chosen per request with the header {@code X-Provider-Fault:
 * drop-after-charge} (several separated by commas; an unknown name is a 400), or at random with the
 * configured probabilities. The merchant is the {@code X-Merchant} header (default {@code
 * default}).
 */
public final class ProviderSimulator implements AutoCloseable {

  /** How the simulator runs. */
  public record Config(
      String host,
      int port,
      Map<Fault, Double> probabilities,
      Duration latency,
      Duration lateAnswer,
      Duration lookupOutage) {

    public Config {
      probabilities = Map.copyOf(probabilities);
    }

    public static Config defaults(int port) {
      return new Config(
          "127.0.0.1",
          port,
          Map.of(),
          Duration.ofMillis(300),
          Duration.ofSeconds(10),
          Duration.ofSeconds(5));
    }

    public Config withProbabilities(Map<Fault, Double> p) {
      return new Config(host, port, p, latency, lateAnswer, lookupOutage);
    }

    public Config withLatency(Duration d) {
      return new Config(host, port, probabilities, d, lateAnswer, lookupOutage);
    }

    public Config withLateAnswer(Duration d) {
      return new Config(host, port, probabilities, latency, d, lookupOutage);
    }

    public Config withLookupOutage(Duration d) {
      return new Config(host, port, probabilities, latency, lateAnswer, d);
    }

    /** Parses {@code drop-after-charge:0.05,timeout-after-charge:0.05}. */
    public static Map<Fault, Double> parseProbabilities(String spec) {
      Map<Fault, Double> p = new EnumMap<>(Fault.class);
      if (spec == null || spec.isBlank()) {
        return p;
      }
      for (String part : spec.split(",")) {
        String[] kv = part.split(":");
        p.put(Fault.fromWireName(kv[0]), Double.parseDouble(kv[1].trim()));
      }
      return p;
    }
  }

  private static final String SCHEMA =
      """
      create table if not exists provider_charge (
          id              text primary key,
          merchant        text not null,
          idempotency_key text not null,
          reference       text not null,
          amount          numeric(19,4) not null,
          currency        char(3) not null,
          status          text not null,
          created_at      timestamptz not null default now(),
          unique (merchant, idempotency_key)
      )""";

  /**
   * Every body in and out. An answer's keys are in alphabetical order, a record's as a map's, so
   * one answer is always the same text; a request body is one JSON value and nothing after it.
   */
  private static final JsonMapper JSON =
      JsonMapper.builder()
          .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
          .disable(MapperFeature.SORT_CREATOR_PROPERTIES_FIRST)
          .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  /** How many charges {@code GET /charges} lists when not asked for a number. */
  static final int DEFAULT_LIST_LIMIT = 100;

  /** The most charges {@code GET /charges} lists. */
  static final int MAX_LIST_LIMIT = 1000;

  private static final String LIST =
      """
      select * from provider_charge
       where cast(? as text) is null or reference = ?
       order by created_at desc, id desc
       limit ?""";

  private static final String SUMMARY =
      """
      select count(*) filter (where status = 'SUCCEEDED') as succeeded,
             count(*) filter (where status = 'DECLINED') as declined,
             count(distinct reference) filter (where status = 'SUCCEEDED') as refs
        from provider_charge
       where cast(? as text) is null or reference = ?""";

  private final Config config;
  private final DataSource dataSource;
  private final Idempotency idempotency;
  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();

  /**
   * Lookups refused until a time, per charge ({@code merchant}, idempotency key): a {@code
   * lookup-unavailable} fault is that request's, not a pause for every merchant and charge.
   */
  private final Map<String, Long> lookupsDownUntil = new ConcurrentHashMap<>();

  private ProviderSimulator(Config config, DataSource dataSource) throws IOException {
    this.config = config;
    this.dataSource = dataSource;
    this.idempotency = Idempotency.create(PostgresIdempotencyStore.create(dataSource));
    // Without it the JDK's server leaves Nagle on and every answer waits for a delayed ACK (~40
    // ms).
    // Read once, when the JDK's server first starts in this JVM.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    this.server = HttpServer.create(new InetSocketAddress(config.host(), config.port()), 200);
    server.createContext("/charges", this::route);
    server.setExecutor(executor);
  }

  /**
   * Starts a simulator keeping its charges (and its own idempotency records) in {@code
   * dataSource}'s database.
   */
  public static ProviderSimulator start(Config config, DataSource dataSource) throws IOException {
    IdemkitSchema.migrate(dataSource);
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(SCHEMA);
    } catch (SQLException e) {
      throw new IOException("Could not create the simulator's table", e);
    }
    ProviderSimulator simulator = new ProviderSimulator(config, dataSource);
    simulator.server.start();
    return simulator;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }

  private void route(HttpExchange exchange) throws IOException {
    try {
      String method = exchange.getRequestMethod();
      if ("POST".equals(method)) {
        charge(exchange);
      } else if ("GET".equals(method)) {
        Map<String, String> query = queryParameters(exchange.getRequestURI().getRawQuery());
        if (query.containsKey("idempotencyKey")) {
          lookup(exchange, query.get("idempotencyKey"));
        } else {
          list(exchange, query);
        }
      } else {
        send(exchange, 405, Map.of("error", "method_not_allowed"));
      }
    } catch (RuntimeException | SQLException e) {
      send(exchange, 500, Map.of("error", "internal", "message", String.valueOf(e.getMessage())));
    } finally {
      exchange.close();
    }
  }

  private List<Fault> faults(HttpExchange exchange) {
    List<Fault> faults = new ArrayList<>();
    String header = exchange.getRequestHeaders().getFirst("X-Provider-Fault");
    if (header != null) {
      for (String name : header.split(",")) {
        if (!name.isBlank()) {
          faults.add(Fault.fromWireName(name));
        }
      }
    }
    double draw = ThreadLocalRandom.current().nextDouble();
    double at = 0;
    for (Map.Entry<Fault, Double> e : config.probabilities().entrySet()) {
      at += e.getValue();
      if (draw < at) {
        faults.add(e.getKey());
        break;
      }
    }
    return faults;
  }

  private void charge(HttpExchange exchange) throws IOException {
    List<Fault> faults;
    try {
      faults = faults(exchange);
    } catch (IllegalArgumentException e) {
      send(exchange, 400, Map.of("error", "unknown_fault", "known", knownFaults()));
      return;
    }
    IdempotencyKey key;
    try {
      key = IdempotencyKey.fromHeader(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
    } catch (InvalidIdempotencyKeyException | NullPointerException e) {
      send(exchange, 400, Map.of("error", "idempotency_key_required"));
      return;
    }
    String merchant =
        Optional.ofNullable(exchange.getRequestHeaders().getFirst("X-Merchant")).orElse("default");
    Optional<ChargeRequest> body = chargeRequest(exchange);
    if (body.isEmpty()) {
      send(exchange, 400, Map.of("error", "invalid_json"));
      return;
    }
    String amount = String.valueOf(body.get().amount());
    String currency = String.valueOf(body.get().currency());
    String reference = String.valueOf(body.get().reference());
    if (faults.contains(Fault.LATENCY)) {
      sleep(config.latency());
    }
    if (faults.contains(Fault.ERROR_BEFORE_CHARGE)) {
      send(exchange, 503, Map.of("error", "temporarily_unavailable", "charged", false));
      return;
    }
    boolean decline = faults.contains(Fault.DECLINE);
    Fingerprint fingerprint =
        Fingerprint.of(Map.of("amount", amount, "currency", currency, "reference", reference));
    Outcome outcome =
        idempotency.execute(
            new IdempotentRequest(
                ScopedKey.of(merchant, "create_charge", key.value()),
                fingerprint,
                Duration.ofDays(7)),
            ctx -> {
              String id = "ch_" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
              try (PreparedStatement ps =
                  ctx.unwrap(Connection.class)
                      .prepareStatement(
                          "insert into provider_charge (id, merchant, idempotency_key, reference,"
                              + " amount, currency, status) values (?, ?, ?, ?, ?, ?, ?)")) {
                ps.setString(1, id);
                ps.setString(2, merchant);
                ps.setString(3, key.value());
                ps.setString(4, reference);
                ps.setBigDecimal(5, new BigDecimal(amount));
                ps.setString(6, currency);
                ps.setString(7, decline ? "DECLINED" : "SUCCEEDED");
                ps.executeUpdate();
              }
              ChargeAnswer charge =
                  new ChargeAnswer(
                      id,
                      decline ? "DECLINED" : "SUCCEEDED",
                      amount,
                      currency,
                      reference,
                      decline ? "card_declined" : null);
              StoredResponse response =
                  StoredResponse.of(
                      decline ? 402 : 201,
                      Map.of("Content-Type", "application/json"),
                      JSON.writeValueAsBytes(charge));
              return decline
                  ? OperationResult.rejected(response)
                  : OperationResult.success(response);
            });
    if (faults.contains(Fault.LOOKUP_UNAVAILABLE)) {
      // From the charge on, for a while: measured from here, not from the request's arrival.
      long now = System.currentTimeMillis();
      lookupsDownUntil.values().removeIf(until -> until <= now);
      lookupsDownUntil.put(
          lookupScope(merchant, key.value()), now + config.lookupOutage().toMillis());
    }
    if (faults.contains(Fault.DROP_AFTER_CHARGE)) {
      return; // closed in route() without a single byte of answer
    }
    if (faults.contains(Fault.TIMEOUT_AFTER_CHARGE)) {
      sleep(config.lateAnswer());
    }
    if (outcome instanceof Outcome.InProgress inProgress) {
      exchange
          .getResponseHeaders()
          .set("Retry-After", String.valueOf(inProgress.retryAfter().toSeconds()));
      send(exchange, 409, Map.of("error", "request_in_progress"));
    } else if (outcome instanceof Outcome.Mismatch) {
      send(exchange, 422, Map.of("error", "idempotency_key_reused"));
    } else {
      StoredResponse r = outcome.storedResponse().orElseThrow();
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      if (outcome instanceof Outcome.Replayed) {
        exchange.getResponseHeaders().set("Idempotent-Replayed", "true");
      }
      byte[] bytes = r.body();
      exchange.sendResponseHeaders(r.status(), bytes.length);
      exchange.getResponseBody().write(bytes);
    }
  }

  /**
   * The charge asked for; empty when the body is not JSON, not an object whose values are scalars,
   * or the JSON {@code null}.
   */
  private static Optional<ChargeRequest> chargeRequest(HttpExchange exchange) throws IOException {
    byte[] body;
    try (InputStream in = exchange.getRequestBody()) {
      body = in.readAllBytes();
    }
    try {
      return Optional.ofNullable(JSON.readValue(body, ChargeRequest.class));
    } catch (JacksonException e) {
      return Optional.empty();
    }
  }

  private void lookup(HttpExchange exchange, String key) throws IOException, SQLException {
    String merchant =
        Optional.ofNullable(exchange.getRequestHeaders().getFirst("X-Merchant")).orElse("default");
    Long downUntil = lookupsDownUntil.get(lookupScope(merchant, key));
    if (downUntil != null && System.currentTimeMillis() < downUntil) {
      send(exchange, 503, Map.of("error", "lookups_unavailable"));
      return;
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select * from provider_charge where merchant = ? and idempotency_key = ?")) {
      ps.setString(1, merchant);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          send(exchange, 404, Map.of("error", "no_such_charge"));
          return;
        }
        send(exchange, 200, charge(rs).answer());
      }
    }
  }

  private void list(HttpExchange exchange, Map<String, String> query)
      throws IOException, SQLException {
    int limit;
    try {
      limit = Integer.parseInt(query.getOrDefault("limit", String.valueOf(DEFAULT_LIST_LIMIT)));
    } catch (NumberFormatException e) {
      send(exchange, 400, Map.of("error", "invalid_limit"));
      return;
    }
    send(exchange, 200, charges(query.get("reference"), limit));
  }

  /**
   * What was really charged: the newest {@code limit} charges (1 to {@value #MAX_LIST_LIMIT}),
   * newest first, and what all of them add up to; only those for {@code reference} (a payment id)
   * unless it is {@code null}.
   */
  public Charges charges(String reference, int limit) throws SQLException {
    List<Charges.Charge> charges = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement list = c.prepareStatement(LIST);
        PreparedStatement summary = c.prepareStatement(SUMMARY)) {
      list.setString(1, reference);
      list.setString(2, reference);
      list.setInt(3, Math.min(Math.max(limit, 1), MAX_LIST_LIMIT));
      try (ResultSet rs = list.executeQuery()) {
        while (rs.next()) {
          charges.add(charge(rs));
        }
      }
      summary.setString(1, reference);
      summary.setString(2, reference);
      try (ResultSet rs = summary.executeQuery()) {
        rs.next();
        long succeeded = rs.getLong("succeeded");
        long references = rs.getLong("refs");
        return new Charges(
            charges,
            new Charges.Summary(
                succeeded, rs.getLong("declined"), references, succeeded - references));
      }
    }
  }

  private static Charges.Charge charge(ResultSet rs) throws SQLException {
    return new Charges.Charge(
        rs.getString("id"),
        rs.getString("merchant"),
        rs.getString("idempotency_key"),
        rs.getString("reference"),
        rs.getBigDecimal("amount").stripTrailingZeros().toPlainString(),
        rs.getString("currency"),
        rs.getString("status"),
        rs.getTimestamp("created_at").toInstant().toString());
  }

  /** A query string's parameters, decoded; the first of a name repeated. */
  private static Map<String, String> queryParameters(String rawQuery) {
    Map<String, String> parameters = new LinkedHashMap<>();
    if (rawQuery == null) {
      return parameters;
    }
    for (String part : rawQuery.split("&")) {
      int equals = part.indexOf('=');
      String name = equals < 0 ? part : part.substring(0, equals);
      String value = equals < 0 ? "" : part.substring(equals + 1);
      parameters.putIfAbsent(
          URLDecoder.decode(name, StandardCharsets.UTF_8),
          URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return parameters;
  }

  private static String lookupScope(String merchant, String key) {
    return merchant + "\n" + key;
  }

  private static List<String> knownFaults() {
    return java.util.Arrays.stream(Fault.values()).map(Fault::wireName).toList();
  }

  private static void send(HttpExchange exchange, int status, Object body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
