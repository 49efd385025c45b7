package dev.idemkit.conformance;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idemkit.client.internal.Json;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tiny idempotent API ({@code POST /items}, {@code POST /other}, {@code GET /effects?ref=R}) that
 * is correct with {@link Flaw#NONE} and carries one classic idempotency bug otherwise, so that the
 * checker can be shown to catch each bug by its check id. It follows the IETF draft or Stripe's
 * semantics ({@link Semantics}). Each operation takes {@code workMillis}, long enough for the
 * in-flight checks to send their second request while the first still runs.
 */
final class FlawedServer implements AutoCloseable {

  /** The bugs real servers have. */
  enum Flaw {
    NONE,
    /** Looks the key up, then inserts it: concurrent duplicates both see "absent" and both run. */
    FIND_THEN_INSERT,
    /** Remembers keys but not what was asked: another request under a used key gets a replay. */
    NO_FINGERPRINT,
    /** Re-renders the stored result on replay, so a replay's bytes differ from the first answer. */
    REPLAYS_DIFFERENT_BYTES,
    /** Keys are global, not per principal: another tenant's key replays that tenant's answer. */
    KEYS_NOT_SCOPED_BY_PRINCIPAL,
    /**
     * Keys are global, and a replay is rendered anew for whoever asks: another tenant's key gets
     * that tenant's resource with its own {@code viewer} and no replay marker, so the bytes differ
     * from the first answer while the resource is the same.
     */
    KEYS_NOT_SCOPED_RE_RENDERED,
    /** Stores the key only when the operation completes: a retry meanwhile runs it again. */
    IN_PROGRESS_NOT_DETECTED,
    /**
     * Looks the key up, runs the operation and stores the key with its answer, so a duplicate that
     * arrives meanwhile slips past the look-up; the business table's unique reference (per
     * principal) then stops its second run, and the client gets that table's 409: a business
     * conflict, not an in-progress answer. One effect, but the duplicate never learns the answer of
     * the operation it retried.
     */
    BUSINESS_CONFLICT_ON_DUPLICATE,
    /**
     * A duplicate of a running request waits for it, but only so long ({@link #giveUpAfter}): then
     * it answers 500 and deletes the claim, so the first request's completion is stored nowhere and
     * the next retry runs the operation again. One effect until a client retries.
     */
    GIVES_UP_AND_FREES_THE_KEY,
    /**
     * An operation that ends in a refusal (a decline, 402) is not stored under its key: a retry
     * runs it again, and the second decline is a second declined record for one key.
     */
    REFUSALS_RUN_AGAIN
  }

  /** Whose rules the server follows where the IETF draft and Stripe differ. */
  enum Semantics {
    /**
     * draft-ietf-httpapi-idempotency-key-header: the key is required and an sf-string (a bare token
     * is also taken); reused with another request, 422; in progress, a 409 problem ({@code
     * application/problem+json}) with Retry-After.
     */
    IETF,
    /**
     * Stripe: the key is optional (without one the request simply runs) and taken literally, quotes
     * and all; reused with other parameters, 400 idempotency_error; in progress, 409
     * idempotency_key_in_use, without Retry-After.
     */
    STRIPE,
    /**
     * The draft's, except that a key reused with another request is a 409 too (as some APIs answer
     * it): both 409s are problems, told apart only by their {@code errorCode}.
     */
    CONFLICT_FOR_MISMATCH,
    /**
     * The draft's, except that a quoted key ({@code "k"}) is refused: only bare tokens are keys.
     */
    BARE_KEYS_ONLY,
    /** The draft's, read strictly: a key is an sf-string ({@code "k"}); a bare token is refused. */
    SF_STRING_KEYS_ONLY
  }

  private static final class Record {
    final String fingerprint;
    final CountDownLatch completed = new CountDownLatch(1);
    volatile String owner;
    volatile boolean done;
    volatile int status;
    volatile String item;
    volatile byte[] body;

    Record(String fingerprint) {
      this.fingerprint = fingerprint;
    }
  }

  private final Flaw flaw;
  private final Semantics semantics;
  private final long workMillis;
  private final HttpServer server;
  private final ExecutorService pool = Executors.newFixedThreadPool(32);
  private final Map<String, Record> records = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();

  /**
   * The business table's unique (principal, reference), for {@link
   * Flaw#BUSINESS_CONFLICT_ON_DUPLICATE}.
   */
  private final Set<String> references = ConcurrentHashMap.newKeySet();

  private final AtomicInteger ids = new AtomicInteger();
  private final AtomicInteger posts = new AtomicInteger();
  private volatile boolean omitLocation;
  private volatile boolean omitIdentifiers;
  private volatile String principalHeader = "Authorization";
  private volatile String keyHeader = "Idempotency-Key";
  private volatile long giveUpMillis;

  FlawedServer(Flaw flaw, long workMillis) throws IOException {
    this(flaw, Semantics.IETF, workMillis);
  }

  FlawedServer(Flaw flaw, Semantics semantics, long workMillis) throws IOException {
    this.flaw = flaw;
    this.semantics = semantics;
    this.workMillis = workMillis;
    this.giveUpMillis = workMillis / 2;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.setExecutor(pool);
    server.createContext("/", this::handle);
    server.start();
  }

  /** Takes the principal from {@code header} (an API key header) instead of Authorization. */
  void authenticateWith(String header) {
    principalHeader = header;
  }

  /** Reads the key from {@code header} (such as {@code X-Idempotency-Key}) instead. */
  void readKeyFrom(String header) {
    keyHeader = header;
  }

  /**
   * How long a duplicate waits for the running request with {@link Flaw#GIVES_UP_AND_FREES_THE_KEY}
   * (half the work, unless set).
   */
  void giveUpAfter(long millis) {
    giveUpMillis = millis;
  }

  /** Renders resources without their id from now on (and so without a Location). */
  void omitIdentifiers() {
    omitIdentifiers = true;
    omitLocation = true;
  }

  /** Answers without {@code Location} headers from now on. */
  void omitLocation() {
    omitLocation = true;
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /**
   * The checker's arguments for a payment-like POST to this server's {@code /items} with tenant a's
   * credentials, then {@code more}.
   */
  String[] itemsArgs(String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--base-url",
                baseUrl(),
                "--path",
                "/items",
                "--body",
                "{\"ref\":\"{{unique}}\",\"amount\":\"10.00\"}",
                "--auth",
                "Bearer tenant-a"));
    args.addAll(List.of(more));
    return args.toArray(String[]::new);
  }

  /** How many requests the idempotent endpoints received, keyed or not. */
  int posts() {
    return posts.get();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      // Served only under its own host name, as a virtual host behind a shared address is: a
      // request for another host (e.g. the checker's proxy's) is misdirected.
      String host = baseUrl().substring("http://".length());
      if (!host.equals(ex.getRequestHeaders().getFirst("Host"))) {
        answer(ex, 421, "{\"error\":\"misdirected request\"}", null, false);
        return;
      }
      String path = ex.getRequestURI().getPath();
      if ("GET".equals(ex.getRequestMethod()) && path.equals("/effects")) {
        String ref = ex.getRequestURI().getQuery().substring("ref=".length());
        int n = effects.getOrDefault(ref, new AtomicInteger()).get();
        answer(ex, 200, "{\"count\":" + n + "}", null, false);
        return;
      }
      if (!"POST".equals(ex.getRequestMethod())
          || !(path.equals("/items") || path.equals("/other"))) {
        answer(ex, 404, "{\"error\":\"not found\"}", null, false);
        return;
      }
      posts.incrementAndGet();
      String principal = ex.getRequestHeaders().getFirst(principalHeader);
      if (principal == null) {
        answer(ex, 401, "{\"error\":\"unauthenticated\"}", null, false);
        return;
      }
      List<String> keys = ex.getRequestHeaders().get(keyHeader);
      if (keys == null && semantics != Semantics.STRIPE) {
        answer(ex, 400, "{\"errorCode\":\"IDEMPOTENCY_KEY_MISSING\"}", null, false);
        return;
      }
      String key = keys == null ? "" : keys.size() == 1 ? parseKey(keys.get(0)) : null;
      if (key == null) {
        answer(ex, 400, "{\"errorCode\":\"IDEMPOTENCY_KEY_INVALID\"}", null, false);
        return;
      }
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Map<?, ?> command;
      try {
        command = (Map<?, ?>) Json.parse(body);
      } catch (RuntimeException e) {
        answer(ex, 400, "{\"errorCode\":\"INVALID_BODY\"}", null, false);
        return;
      }
      Object ref = command.get("ref");
      Object amount = command.get("amount");
      if (!(ref instanceof String)
          || !(amount instanceof String a)
          || !a.matches("\\d+\\.\\d\\d|decline")) {
        answer(ex, 400, "{\"errorCode\":\"INVALID_BODY\"}", null, false);
        return;
      }
      boolean global =
          flaw == Flaw.KEYS_NOT_SCOPED_BY_PRINCIPAL || flaw == Flaw.KEYS_NOT_SCOPED_RE_RENDERED;
      String scope = (global ? "" : principal) + "|" + path + "|" + key;
      String fingerprint = path + "|" + ref + "|" + amount;
      Record mine = new Record(fingerprint);
      mine.owner = principal;
      // Stripe: a request without a key is not idempotent, it just runs.
      Record existing = key.isEmpty() ? null : claim(scope, mine);
      if (existing != null) {
        if (flaw != Flaw.NO_FINGERPRINT && !existing.fingerprint.equals(fingerprint)) {
          if (semantics == Semantics.STRIPE) {
            answer(ex, 400, "{\"error\":{\"type\":\"idempotency_error\"}}", null, false);
          } else if (semantics == Semantics.CONFLICT_FOR_MISMATCH) {
            problem(ex, 409, "IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
          } else {
            answer(
                ex,
                422,
                "{\"errorCode\":\"IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST\"}",
                null,
                false);
          }
        } else if (!existing.done
            && flaw == Flaw.GIVES_UP_AND_FREES_THE_KEY
            && !existing.completed.await(giveUpMillis, TimeUnit.MILLISECONDS)) {
          // Gave up waiting: the claim goes, and with it the first request's completion.
          records.remove(scope, existing);
          answer(ex, 500, "{\"error\":\"timed out waiting for the first request\"}", null, false);
        } else if (!existing.done && semantics == Semantics.STRIPE) {
          answer(
              ex,
              409,
              "{\"error\":{\"type\":\"idempotency_error\",\"code\":\"idempotency_key_in_use\"}}",
              null,
              false);
        } else if (!existing.done) {
          ex.getResponseHeaders().add("Retry-After", "1");
          problem(ex, 409, "IDEMPOTENCY_REQUEST_IN_PROGRESS");
        } else if (flaw == Flaw.KEYS_NOT_SCOPED_RE_RENDERED
            && existing.status == 201
            && !existing.owner.equals(principal)) {
          answer(
              ex,
              201,
              render(existing.item, (String) ref, (String) amount, principal),
              "/items/" + existing.item,
              false);
        } else {
          byte[] replay =
              flaw == Flaw.REPLAYS_DIFFERENT_BYTES && existing.status == 201
                  ? render(existing.item, (String) ref, (String) amount, principal)
                  : existing.body;
          answer(
              ex,
              existing.status,
              replay,
              existing.status == 201 ? "/items/" + existing.item : null,
              true);
        }
        return;
      }
      // Run the operation.
      Thread.sleep(workMillis);
      if ("decline".equals(amount)) {
        // A declined record: what the refusal leaves behind, one per run of the operation.
        effects.computeIfAbsent((String) ref, r -> new AtomicInteger()).incrementAndGet();
        mine.status = 402;
        mine.body = "{\"errorCode\":\"PAYMENT_DECLINED\"}".getBytes(StandardCharsets.UTF_8);
      } else if (flaw == Flaw.BUSINESS_CONFLICT_ON_DUPLICATE
          && !references.add(principal + "|" + ref)) {
        // The unique violation rolls the whole request back: no effect, no key stored.
        answer(ex, 409, "{\"errorCode\":\"REFERENCE_ALREADY_USED\"}", null, false);
        return;
      } else {
        effects.computeIfAbsent((String) ref, r -> new AtomicInteger()).incrementAndGet();
        mine.item = "it_" + ids.incrementAndGet();
        mine.status = 201;
        mine.body = render(mine.item, (String) ref, (String) amount, principal);
      }
      mine.done = true;
      mine.completed.countDown();
      if (flaw == Flaw.REFUSALS_RUN_AGAIN && mine.status == 402) {
        records.remove(scope, mine);
      }
      if ((flaw == Flaw.IN_PROGRESS_NOT_DETECTED || flaw == Flaw.BUSINESS_CONFLICT_ON_DUPLICATE)
          && !key.isEmpty()) {
        records.put(scope, mine);
      }
      answer(ex, mine.status, mine.body, mine.status == 201 ? "/items/" + mine.item : null, false);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Returns the record already there, or null when {@code mine} became the owner. */
  private Record claim(String scope, Record mine) throws InterruptedException {
    switch (flaw) {
      case FIND_THEN_INSERT -> {
        Record found = records.get(scope);
        if (found != null) {
          return found;
        }
        Thread.sleep(20); // the window between the look-up and the insert
        records.put(scope, mine);
        return null;
      }
      case IN_PROGRESS_NOT_DETECTED, BUSINESS_CONFLICT_ON_DUPLICATE -> {
        Record found = records.get(scope);
        return found != null && found.done ? found : null;
      }
      default -> {
        return records.putIfAbsent(scope, mine);
      }
    }
  }

  private byte[] render(String item, String ref, String amount, String viewer) {
    String servedAt =
        flaw == Flaw.REPLAYS_DIFFERENT_BYTES ? ",\"servedAt\":\"" + Instant.now() + "\"" : "";
    if (flaw == Flaw.KEYS_NOT_SCOPED_RE_RENDERED) {
      servedAt = ",\"viewer\":\"" + viewer + "\"";
    }
    return ((omitIdentifiers ? "{" : "{\"id\":\"" + item + "\",")
            + "\"ref\":\""
            + ref
            + "\",\"amount\":\""
            + amount
            + "\""
            + servedAt
            + "}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * IETF: the draft's sf-string ({@code "k"}) or a bare token; Stripe: the header as it is, quotes
   * included. Either way 1–255 printable ASCII characters.
   */
  private String parseKey(String header) {
    String v = header.trim();
    if (semantics == Semantics.STRIPE) {
      return v.isEmpty() || v.length() > 255 || !v.chars().allMatch(c -> c > 0x20 && c < 0x7f)
          ? null
          : v;
    }
    if (v.startsWith("\"") == (semantics == Semantics.BARE_KEYS_ONLY)
        && (semantics == Semantics.BARE_KEYS_ONLY || semantics == Semantics.SF_STRING_KEYS_ONLY)) {
      return null;
    }
    if (v.startsWith("\"")) {
      if (v.length() < 2 || !v.endsWith("\"")) {
        return null;
      }
      v = v.substring(1, v.length() - 1);
    }
    if (v.isEmpty() || v.length() > 255) {
      return null;
    }
    for (char c : v.toCharArray()) {
      if (c < 0x21 || c > 0x7e || c == '"') {
        return null;
      }
    }
    return v;
  }

  /** The draft's form of an idempotency error: a problem (RFC 9457) with the server's code. */
  private static void problem(HttpExchange ex, int status, String errorCode) throws IOException {
    byte[] body =
        ("{\"type\":\"https://api.example.test/problems/idempotency\",\"status\":"
                + status
                + ",\"errorCode\":\""
                + errorCode
                + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/problem+json");
    ex.sendResponseHeaders(status, body.length);
    ex.getResponseBody().write(body);
  }

  private void answer(HttpExchange ex, int status, String body, String location, boolean replay)
      throws IOException {
    answer(ex, status, body.getBytes(StandardCharsets.UTF_8), location, replay);
  }

  private void answer(HttpExchange ex, int status, byte[] body, String location, boolean replay)
      throws IOException {
    ex.getResponseHeaders().add("Content-Type", "application/json");
    if (location != null && !omitLocation) {
      ex.getResponseHeaders().add("Location", location);
    }
    if (replay) {
      ex.getResponseHeaders().add("Idempotent-Replayed", "true");
    }
    ex.sendResponseHeaders(status, body.length);
    ex.getResponseBody().write(body);
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
