package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * contract §2, §4 and §8 (docs/contract.md) "bad keys and bad bodies": every malformed key, body or
 * gate violation gets a clear 4xx {@code application/problem+json} with a stable {@code errorCode},
 * leaves no idempotency record, no payment and no order change, and logs nothing at ERROR.
 *
 * <p>Header bytes that {@link java.net.http.HttpClient} refuses or rewrites (control characters;
 * non-ASCII, which it sends as {@code ?}) go over a plain socket as hand-written HTTP/1.1 bytes.
 * Tomcat itself refuses a header line with a control character or DEL before any filter runs; the
 * answer must still be contract §2's (docs/contract.md) 400 {@code IDEMPOTENCY_KEY_INVALID} problem
 * (Tomcat's exception names the offending header line, so a container-level error renderer can
 * tell).
 */
class BadInputIT extends HttpTestSupport {

  private static final String PAYMENTS = "/v1/payments";
  private static final String ORDERS = "/v1/orders";
  private static final String KEY_INVALID = "IDEMPOTENCY_KEY_INVALID";
  private static final String VALIDATION_FAILED = "VALIDATION_FAILED";
  private static final String WRONG_TYPE = "WRONG_TYPE";
  private static final String INVALID_JSON = "INVALID_JSON";
  private static final int ONE_MB = 1024 * 1024;
  private static final String ADMIN = "sk_test_admin";

  /** ERROR lines logged before this class ran (the list is shared by every class in the JVM). */
  private static int errorsBeforeClass;

  /** An order of 10.00 EUR awaiting payment, the target of the confirm-payment cases. */
  private static String orderId;

  /**
   * One bad request: what it must get, which keys and merchant reference it must leave untouched,
   * and how it is sent.
   */
  record Case(
      String name,
      int status,
      String errorCode,
      List<String> keys,
      String reference,
      Function<BadInputIT, Reply> send) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** A response, however it was received. */
  record Reply(int status, Map<String, List<String>> headers, String body) {
    String header(String name) {
      List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
      return values == null || values.isEmpty() ? null : values.get(0);
    }

    static Reply of(HttpResponse<String> response) {
      Map<String, List<String>> headers = new LinkedHashMap<>();
      response
          .headers()
          .map()
          .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values));
      return new Reply(response.statusCode(), headers, response.body());
    }
  }

  @BeforeAll
  static void rememberErrors() {
    errorsBeforeClass = ERRORS.size();
  }

  @AfterAll
  static void nothingWasLoggedAtError() {
    assertThat(ERRORS.subList(errorsBeforeClass, ERRORS.size()))
        .as("ERROR lines logged while the bad-input suite ran")
        .isEmpty();
  }

  @BeforeEach
  void anOrderAwaitingPayment() {
    if (orderId == null) {
      HttpResponse<String> created =
          post(
              ORDERS,
              TENANT_A,
              newKey(),
              """
              {"currency":"EUR","items":[{"sku":"sku-1","quantity":1,"unitPrice":"10.00"}]}""");
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      orderId = JSON.readTree(created.body()).get("orderId").asString();
    }
  }

  @Test
  void aKeyHttpRefusesOnAGetIsAMalformedRequestNotAMalformedKey() {
    long recordsBefore = allRecords();
    RawHttp.Reply r =
        RawHttp.exchange(
            port,
            "GET",
            "/v1/payments?merchantReference=x",
            List.of("Authorization: Bearer " + TENANT_A, "Idempotency-Key: a\u0007b"),
            null);

    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.header("Content-Type")).startsWith("application/problem+json");
    assertThat(r.body()).contains("\"errorCode\":\"MALFORMED_REQUEST\"");
    assertThat(allRecords()).isEqualTo(recordsBefore);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource({"keyCases", "bodyCases", "gateCases", "orderCases"})
  void isRefusedWithAClear4xxAndLeavesNothingBehind(Case c) {
    int errorsBefore = ERRORS.size();
    long recordsBefore = allRecords();
    long paymentsBefore = count("payment");
    long ordersBefore = count("shop_order");
    Map<String, Object> orderBefore = orderRow();

    Reply r = c.send().apply(this);

    String what = c.name() + " answered " + r.status() + " " + r.headers() + " " + r.body();
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(r.status()).as("status of " + what).isEqualTo(c.status());
    soft.assertThat(r.status()).as("a client error, never 5xx: " + what).isBetween(400, 499);
    soft.assertThat(mediaType(r.header("Content-Type")))
        .as("Content-Type of " + what)
        .isEqualTo("application/problem+json");
    JsonNode problem = parse(r.body());
    soft.assertThat(problem).as("problem body of " + what).isNotNull();
    if (problem != null) {
      soft.assertThat(problem.path("errorCode").asString(""))
          .as("errorCode of " + what)
          .isEqualTo(c.errorCode());
      soft.assertThat(problem.path("detail").asString("")).as("detail of " + what).isNotBlank();
      soft.assertThat(problem.path("status").asInt(-1))
          .as("status field of " + what)
          .isEqualTo(r.status());
    }
    for (String key : c.keys()) {
      soft.assertThat(recordsFor(key))
          .as("records for key [" + key + "] " + recordStates(key) + " after " + what)
          .isZero();
    }
    soft.assertThat(allRecords()).as("all records after " + what).isEqualTo(recordsBefore);
    if (c.reference() != null) {
      soft.assertThat(paymentsFor(c.reference()))
          .as("payments for " + c.reference() + " after " + what)
          .isZero();
    }
    soft.assertThat(count("payment")).as("all payments after " + what).isEqualTo(paymentsBefore);
    soft.assertThat(count("shop_order")).as("all orders after " + what).isEqualTo(ordersBefore);
    soft.assertThat(orderRow()).as("the open order after " + what).isEqualTo(orderBefore);
    soft.assertThat(new ArrayList<>(ERRORS.subList(errorsBefore, ERRORS.size())))
        .as("ERROR lines logged by " + what)
        .isEmpty();
    soft.assertAll();
  }

  /**
   * One request with text the database cannot store or the service does not take (a NUL, bytes that
   * are not UTF-8, a control character; in a reference, an invisible or bidirectional-control
   * character): the answer and the words its detail must hold (which parameter or field, which
   * character, where).
   */
  record TextCase(String name, String errorCode, String detail, Function<BadInputIT, Reply> send) {
    @Override
    public String toString() {
      return name;
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("textCases")
  void textTheServiceDoesNotTakeIsA400ThatSaysWhereAndNothingIsStored(TextCase c) {
    int errorsBefore = ERRORS.size();
    Map<String, Long> before = rowCounts();

    Reply r = c.send().apply(this);

    String what = c.name() + " answered " + r.status() + " " + r.headers() + " " + r.body();
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(r.status()).as("status of " + what).isEqualTo(400);
    soft.assertThat(mediaType(r.header("Content-Type")))
        .as("Content-Type of " + what)
        .isEqualTo("application/problem+json");
    JsonNode problem = parse(r.body());
    soft.assertThat(problem).as("problem body of " + what).isNotNull();
    if (problem != null) {
      soft.assertThat(problem.path("errorCode").asString(""))
          .as("errorCode of " + what)
          .isEqualTo(c.errorCode());
      soft.assertThat(problem.path("detail").asString(""))
          .as("detail of " + what)
          .contains(c.detail());
    }
    soft.assertThat(rowCounts()).as("rows after " + what).isEqualTo(before);
    soft.assertThat(new ArrayList<>(ERRORS.subList(errorsBefore, ERRORS.size())))
        .as("ERROR lines logged by " + what)
        .isEmpty();
    soft.assertAll();
  }

  static Stream<TextCase> textCases() {
    String query = "INVALID_QUERY_PARAMETER";
    String record = "/v1/admin/idempotency/records/tenant_demo_a/create_payment/";
    return Stream.of(
        rawGet(
            "query: NUL (%00) in merchantReference",
            query,
            "Query parameter merchantReference has U+0000 (a control character) at position 3",
            PAYMENTS + "?merchantReference=ab%00"),
        rawGet(
            "query: %ff in merchantReference",
            query,
            "Query parameter merchantReference has %FF at position 1, which is not UTF-8",
            PAYMENTS + "?merchantReference=%ff"),
        rawGet(
            "query: overlong NUL %C0%80 in merchantReference",
            query,
            "Query parameter merchantReference has %C0%80 at position 2, which is not UTF-8",
            PAYMENTS + "?merchantReference=x%C0%80"),
        rawGet(
            "query: NUL in accountId",
            query,
            "Query parameter accountId has U+0000 (a control character) at position 4",
            PAYMENTS + "?merchantReference=x&accountId=acc%00"),
        rawGet(
            "query: C1 control U+0085 in merchantReference",
            query,
            "Query parameter merchantReference has U+0085 (a control character) at position 2",
            PAYMENTS + "?merchantReference=a%C2%85"),
        rawGet(
            "query: right-to-left override in merchantReference",
            query,
            "Query parameter merchantReference has U+202E (a bidirectional control) at position 4",
            PAYMENTS + "?merchantReference=abc%E2%80%AEfed"),
        rawGet(
            "query: zero-width space in merchantReference",
            query,
            "Query parameter merchantReference has U+200B (an invisible format character) at"
                + " position 2",
            PAYMENTS + "?merchantReference=x%E2%80%8B"),
        // Issue 38: on the open endpoints too, and whatever the endpoint takes.
        rawGet(
            "query: a parameter without a name on the open health endpoint",
            query,
            "A query parameter has no name",
            "/actuator/health?=1",
            null),
        rawGet(
            "query: a bad escape on the open health endpoint",
            query,
            "has a '%' that is not followed by two hexadecimal digits",
            "/actuator/health?%zz",
            null),
        rawGet(
            "query: merchantReference sent twice",
            query,
            "Query parameter merchantReference is sent more than once",
            PAYMENTS + "?merchantReference=a&merchantReference=b"),
        rawGet(
            "query: operator record lookup without its key parameter",
            "MISSING_QUERY_PARAMETER",
            "Add the query parameter key",
            "/v1/admin/idempotency/records/tenant_demo_a/create_payment",
            ADMIN),
        rawGet(
            "query: NUL in a parameter the endpoint does not take",
            query,
            "Query parameter note has U+0000",
            "/v1/accounts/acc_1/balance?note=%00"),
        withFreshKey(
            k -> {
              String ref = reference();
              return new TextCase(
                  "query: %ff on a payment that is otherwise valid",
                  query,
                  "Query parameter x has %FF",
                  t ->
                      t.postJson(PAYMENTS + "?x=%ff", TENANT_A, List.of(k), payment(ref, "10.00")));
            }),
        rawGet(
            "query: operator record lookup, NUL in key",
            query,
            "Query parameter key has U+0000 (a control character) at position 2",
            "/v1/admin/idempotency/records/tenant_demo_a/create_payment?key=k%00",
            ADMIN),
        rawGet(
            "path: NUL (%00) in accountId",
            "MALFORMED_PATH",
            "U+0000 (a control character), at position 15",
            "/v1/accounts/a%00/balance"),
        rawGet(
            "path: C1 control U+0085 in accountId",
            "MALFORMED_PATH",
            "has U+0085 (a control character) at position 15",
            "/v1/accounts/a%C2%85/balance"),
        rawGet(
            "path: %C0%80 in an operator path's tenant",
            "MALFORMED_PATH", "not UTF-8", record.replace("tenant_demo_a", "t%C0%80") + "k"),
        textBody(
            "body: NUL in merchantReference",
            PAYMENTS,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", json("ab\u0000" + ref), null),
            "merchantReference has U+0000 (a control character) at position 3"),
        textBody(
            "body: right-to-left override in merchantReference",
            PAYMENTS,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", json("abc\u202e" + ref), null),
            "merchantReference has U+202E (a bidirectional control) at position 4"),
        textBody(
            "body: byte order mark in merchantReference",
            PAYMENTS,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", json("\ufeff" + ref), null),
            "merchantReference has U+FEFF (an invisible format character) at position 1"),
        textBody(
            "body: unpaired surrogate in merchantReference",
            PAYMENTS,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", "\"ab\\ud800" + ref + "\"", null),
            "merchantReference has U+D800 (half of a surrogate pair, not a character) at"
                + " position 3"),
        textBody(
            "body: NUL in an order item's sku",
            ORDERS,
            ref -> items("EUR", "{\"sku\":\"s\\u0000\",\"quantity\":1,\"unitPrice\":\"1.00\"}"),
            "items[0].sku has U+0000 (a control character) at position 2"),
        textBody(
            "body: zero-width space in the second item's sku",
            ORDERS,
            ref ->
                items(
                    "EUR",
                    "{\"sku\":\"a\",\"quantity\":1,\"unitPrice\":\"1.00\"},"
                        + "{\"sku\":\"book\\u200b\",\"quantity\":1,\"unitPrice\":\"1.00\"}"),
            "items[1].sku has U+200B (an invisible format character) at position 5"),
        operatorBody(
            "operator: NUL in a resolution's reason",
            record + newKey() + "/resolution",
            "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"checked\\u0000\"}",
            "reason has U+0000 (a control character) at position 8"),
        operatorBody(
            "operator: NUL in a resolution's externalReference",
            record + newKey() + "/resolution",
            "{\"outcome\":\"APPLIED\",\"externalReference\":\"ch_1\\u0000\","
                + "\"reason\":\"found in the dashboard\"}",
            "externalReference has U+0000 (a control character) at position 5"),
        operatorBody(
            "operator: zero-width space in a resolution's externalReference",
            record + newKey() + "/resolution",
            "{\"outcome\":\"APPLIED\",\"externalReference\":\"\\u200bch_1\","
                + "\"reason\":\"found in the dashboard\"}",
            "externalReference has U+200B (an invisible format character) at position 1"),
        operatorBody(
            "operator: a line break in a resolution's reason, key in the query",
            "/v1/admin/idempotency/records/tenant_demo_a/create_payment/resolution?key=" + newKey(),
            "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"line one\\nline two\"}",
            "reason has U+000A (a control character) at position 9"));
  }

  private static TextCase rawGet(String name, String errorCode, String detail, String target) {
    return rawGet(name, errorCode, detail, target, TENANT_A);
  }

  private static TextCase rawGet(
      String name, String errorCode, String detail, String target, String apiKey) {
    return new TextCase(
        name, errorCode, detail, t -> t.rawExchange("GET", target, apiKey, null, null));
  }

  /** A body built around a fresh reference, sent with a fresh key. */
  private static TextCase textBody(
      String name, String path, Function<String, String> body, String detail) {
    return withFreshKey(
        k -> {
          String ref = reference();
          return new TextCase(
              name,
              VALIDATION_FAILED,
              detail,
              t -> t.postJson(path, TENANT_A, List.of(k), body.apply(ref)));
        });
  }

  private static TextCase operatorBody(String name, String path, String body, String detail) {
    return new TextCase(
        name, VALIDATION_FAILED, detail, t -> t.postJson(path, ADMIN, List.of(), body));
  }

  /** Requests the service refuses at the container or routing level: problem+json all the same. */
  @Test
  void traceIsA405ProblemWithAnAllowHeader() {
    Reply r = rawExchange("TRACE", PAYMENTS, TENANT_A, null, null);

    assertThat(r.status()).as(r.body()).isEqualTo(405);
    assertThat(mediaType(r.header("Content-Type"))).isEqualTo("application/problem+json");
    assertThat(r.header("Allow")).isNotBlank().doesNotContain("TRACE");
    assertThat(parse(r.body()).path("errorCode").asString()).isEqualTo("METHOD_NOT_ALLOWED");
    assertThat(parse(r.body()).path("detail").asString()).contains("TRACE");
  }

  @Test
  void aMethodAnEndpointDoesNotTakeIsA405WithItsOwnAllowHeader() {
    Reply r = rawExchange("DELETE", PAYMENTS, TENANT_A, null, null);

    assertThat(r.status()).as(r.body()).isEqualTo(405);
    assertThat(mediaType(r.header("Content-Type"))).isEqualTo("application/problem+json");
    assertThat(r.header("Allow").split(",")).containsExactlyInAnyOrder("GET", "POST");
  }

  @Test
  void tooManyHeadersIsA431ProblemThatSaysSo() {
    int errorsBefore = ERRORS.size();
    List<String> headers = new ArrayList<>(List.of("Authorization: Bearer " + TENANT_A));
    for (int i = 0; i < 150; i++) {
      headers.add("X-Header-" + i + ": " + i);
    }
    RawHttp.Reply r =
        RawHttp.exchange(port, "GET", PAYMENTS + "?merchantReference=x", headers, null);

    assertThat(r.status()).as(r.body()).isEqualTo(431);
    assertThat(r.header("Content-Type")).startsWith("application/problem+json");
    JsonNode problem = parse(r.body());
    assertThat(problem.path("errorCode").asString()).isEqualTo("TOO_MANY_HEADERS");
    assertThat(problem.path("detail").asString()).contains("more than 100 header fields");
    assertThat(ERRORS.subList(errorsBefore, ERRORS.size())).isEmpty();
  }

  @Test
  void reWrappingUnderAMasterKeyNobodyHasIsA404() {
    Reply r = rawExchange("POST", "/v1/admin/master-keys/no-such-key/rewrap", ADMIN, null, null);

    assertThat(r.status()).as(r.body()).isEqualTo(404);
    assertThat(mediaType(r.header("Content-Type"))).isEqualTo("application/problem+json");
    assertThat(parse(r.body()).path("errorCode").asString()).isEqualTo("MASTER_KEY_NOT_FOUND");
    assertThat(parse(r.body()).path("detail").asString())
        .contains("No master key no-such-key")
        .contains("demo-mk1");
  }

  // ---------------------------------------------------------------------------------------------
  // Cases

  /** Malformed Idempotency-Key headers on an otherwise valid payment. */
  static Stream<Case> keyCases() {
    return Stream.of(
        keyCase("key: empty value", ""),
        keyCase("key: only spaces", "   "),
        withFreshKey(
            k -> {
              String long256 = k + "-".repeat(256 - k.length());
              return keyCase("key: 256 characters", long256, k, long256.substring(0, 255));
            }),
        withFreshKey(k -> keyCase("key: contains a space", k + " x", k, k + " x")),
        withFreshKey(k -> keyCase("key: contains a tab", k + "\tx", k, k + "\tx")),
        withFreshKey(
            k ->
                rawKeyCase(
                    "key: non-ASCII é (raw ISO-8859-1 byte)",
                    KEY_INVALID,
                    (k + "é").getBytes(StandardCharsets.ISO_8859_1),
                    k)),
        withFreshKey(
            k ->
                rawKeyCase(
                    "key: non-ASCII é (raw UTF-8 bytes)",
                    KEY_INVALID,
                    (k + "é").getBytes(StandardCharsets.UTF_8),
                    k)),
        withFreshKey(
            k ->
                rawKeyCase(
                    "key: control character U+0001 (raw bytes)",
                    KEY_INVALID,
                    (k + "\u0001x").getBytes(StandardCharsets.ISO_8859_1),
                    k)),
        withFreshKey(
            k ->
                rawKeyCase(
                    "key: DEL U+007F (raw bytes)",
                    KEY_INVALID,
                    (k + "\u007fx").getBytes(StandardCharsets.ISO_8859_1),
                    k)),
        withFreshKey(k -> keyCase("key: unbalanced leading quote \"abc", "\"" + k, k)),
        withFreshKey(k -> keyCase("key: stray trailing quote abc\"", k + "\"", k)),
        withFreshKey(k -> keyCase("key: invalid escape inside quotes", "\"" + k + "\\x\"", k)),
        withFreshKey(k -> keyCase("key: text after the closing quote", "\"" + k + "\" x", k)),
        withFreshKey(
            k -> {
              String other = newKey();
              String ref = reference();
              return new Case(
                  "key: two Idempotency-Key header fields",
                  400,
                  KEY_INVALID,
                  List.of(k, other),
                  ref,
                  t -> t.postJson(PAYMENTS, TENANT_A, List.of(k, other), payment(ref, "10.00")));
            }),
        withFreshKey(
            k -> {
              String other = newKey();
              return keyCase("key: a list in one field (a, b)", k + ", " + other, k, other);
            }),
        withFreshKey(
            k -> {
              String other = newKey();
              return keyCase(
                  "key: a list of quoted strings (\"a\", \"b\")",
                  "\"" + k + "\", \"" + other + "\"",
                  k,
                  other);
            }),
        withFreshKey(k -> keyCase("key: a parameterized value (a;p=1)", k + ";p=1", k)),
        apiVersionCase("api version: two Api-Version header fields", "2024-01-01", "2025-06-01"),
        apiVersionCase("api version: a list in one Api-Version field", "2024-01-01, 2025-06-01"),
        paymentCase(
            "key: absent on a required endpoint",
            400,
            "IDEMPOTENCY_KEY_MISSING",
            null,
            ref -> payment(ref, "10.00")));
  }

  /** Bodies that are not a valid create-payment command, each sent with a fresh valid key. */
  static Stream<Case> bodyCases() {
    return Stream.of(
        paymentCase("body: invalid JSON (truncated)", 400, INVALID_JSON, ref -> "{\"accountId\":"),
        paymentCase("body: not JSON at all", 400, INVALID_JSON, ref -> "amount=10.00&currency=EUR"),
        paymentCase("body: empty", 400, INVALID_JSON, ref -> ""),
        paymentCase(
            "body: a JSON array instead of an object",
            400,
            WRONG_TYPE,
            ref -> "[" + payment(ref, "10.00") + "]"),
        paymentCase("body: a JSON string instead of an object", 400, WRONG_TYPE, ref -> "\"x\""),
        paymentCase(
            "body: amount is an object",
            400,
            WRONG_TYPE,
            ref -> body("acc_1", "{\"value\":\"10.00\"}", "\"EUR\"", json(ref), null)),
        paymentCase(
            "body: amount is boolean true",
            400,
            WRONG_TYPE,
            ref -> body("acc_1", "true", "\"EUR\"", json(ref), null)),
        // The document says string: a number or a boolean is not turned into one (issue 38).
        paymentCase(
            "body: amount is the number 10.00",
            400,
            WRONG_TYPE,
            ref -> body("acc_1", "10.00", "\"EUR\"", json(ref), null)),
        paymentCase(
            "body: merchantReference is boolean true",
            400,
            WRONG_TYPE,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", "true", null)),
        paymentCase(
            "body: accountId is the number 42",
            400,
            WRONG_TYPE,
            ref ->
                body(null, "\"10.00\"", "\"EUR\"", json(ref), null)
                    .replace("{", "{\"accountId\":42,")),
        paymentCase(
            "body: merchantReference is an array",
            400,
            WRONG_TYPE,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", "[" + json(ref) + "]", null)),
        paymentCase("body: negative amount", 400, VALIDATION_FAILED, ref -> payment(ref, "-5.00")),
        paymentCase("body: zero amount", 400, VALIDATION_FAILED, ref -> payment(ref, "0")),
        paymentCase(
            "body: zero amount with decimals", 400, VALIDATION_FAILED, ref -> payment(ref, "0.00")),
        paymentCase(
            "body: huge amount 10000000000",
            400,
            VALIDATION_FAILED,
            ref -> payment(ref, "10000000000")),
        paymentCase(
            "body: over-precise amount 10.001 EUR",
            400,
            VALIDATION_FAILED,
            ref -> payment(ref, "10.001")),
        paymentCase(
            "body: amount in exponent notation 1e3",
            400,
            VALIDATION_FAILED,
            ref -> payment(ref, "1e3")),
        paymentCase(
            "body: JPY with decimals 10.5",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "\"10.5\"", "\"JPY\"", json(ref), null)),
        paymentCase(
            "body: unknown currency XYZ",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "\"10.00\"", "\"XYZ\"", json(ref), null)),
        paymentCase(
            "body: invalid lowercase currency eu",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "\"10.00\"", "\"eu\"", json(ref), null)),
        paymentCase(
            "body: unknown field",
            400,
            "UNKNOWN_FIELD",
            ref ->
                "{\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\","
                    + "\"merchantReference\":"
                    + json(ref)
                    + ",\"tip\":\"1.00\"}"),
        paymentCase(
            "body: the amount twice (the last one would charge 99.00)",
            400,
            "DUPLICATE_FIELD",
            ref ->
                "{\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\","
                    + "\"merchantReference\":"
                    + json(ref)
                    + ",\"amount\":\"99.00\"}"),
        paymentCase(
            "body: missing accountId",
            400,
            VALIDATION_FAILED,
            ref -> body(null, "\"10.00\"", "\"EUR\"", json(ref), null)),
        paymentCase(
            "body: accountId with a space",
            400,
            VALIDATION_FAILED,
            ref -> body("acc 1", "\"10.00\"", "\"EUR\"", json(ref), null)),
        paymentCase(
            "body: missing amount",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", null, "\"EUR\"", json(ref), null)),
        paymentCase(
            "body: amount null",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "null", "\"EUR\"", json(ref), null)),
        paymentCase(
            "body: missing currency",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "\"10.00\"", null, json(ref), null)),
        new Case(
            "body: missing merchantReference",
            400,
            VALIDATION_FAILED,
            List.of(),
            null,
            t ->
                t.postJson(
                    PAYMENTS,
                    TENANT_A,
                    List.of(newKey()),
                    body("acc_1", "\"10.00\"", "\"EUR\"", null, null))),
        blankReference(),
        paymentCase(
            "body: merchantReference with a NUL character",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", json(ref + "\u0000x"), null)),
        paymentCase(
            "body: merchantReference with an unpaired surrogate \\ud800",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", "\"" + ref + "\\ud800x\"", null)),
        paymentCase(
            "body: channel not in web/mobile/pos",
            400,
            VALIDATION_FAILED,
            ref -> body("acc_1", "\"10.00\"", "\"EUR\"", json(ref), "\"fax\"")),
        withFreshKey(
            k -> {
              String ref = reference();
              return new Case(
                  "body: invalid UTF-8 bytes",
                  400,
                  INVALID_JSON,
                  List.of(k),
                  ref,
                  t -> {
                    // A merchantReference whose bytes are not UTF-8: C3 28 is a broken sequence.
                    byte[] bad =
                        concat(
                            concat(
                                ascii(
                                    "{\"accountId\":\"acc_1\",\"amount\":\"10.00\","
                                        + "\"currency\":\"EUR\",\"merchantReference\":\""
                                        + ref),
                                new byte[] {(byte) 0xC3, (byte) 0x28, (byte) 0xFF}),
                            ascii("\"}"));
                    return t.exchange(
                        PAYMENTS,
                        headers(TENANT_A, "application/json", k),
                        BodyPublishers.ofByteArray(bad));
                  });
            }));
  }

  /** What the gate and Spring MVC refuse before the handler: size, media type, authentication. */
  static Stream<Case> gateCases() {
    return Stream.of(
        withFreshKey(
            k -> {
              String ref = reference();
              return new Case(
                  "gate: 1 MB body with Content-Length",
                  413,
                  "PAYLOAD_TOO_LARGE",
                  List.of(k),
                  ref,
                  t ->
                      t.exchange(
                          PAYMENTS,
                          headers(TENANT_A, "application/json", k),
                          BodyPublishers.ofString(padded(ref, ONE_MB))));
            }),
        withFreshKey(
            k -> {
              String ref = reference();
              return new Case(
                  "gate: chunked body over the limit, no Content-Length",
                  413,
                  "PAYLOAD_TOO_LARGE",
                  List.of(k),
                  ref,
                  t -> {
                    byte[] bytes = padded(ref, ONE_MB).getBytes(StandardCharsets.UTF_8);
                    return t.exchange(
                        PAYMENTS,
                        headers(TENANT_A, "application/json", k),
                        BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes)));
                  });
            }),
        withFreshKey(
            k -> {
              String ref = reference();
              return new Case(
                  "gate: Content-Type text/plain",
                  415,
                  "UNSUPPORTED_MEDIA_TYPE",
                  List.of(k),
                  ref,
                  t ->
                      t.exchange(
                          PAYMENTS,
                          headers(TENANT_A, "text/plain", k),
                          BodyPublishers.ofString(payment(ref, "10.00"))));
            }),
        withFreshKey(
            k -> {
              String ref = reference();
              return new Case(
                  "gate: no Content-Type",
                  415,
                  "UNSUPPORTED_MEDIA_TYPE",
                  List.of(k),
                  ref,
                  t ->
                      t.exchange(
                          PAYMENTS,
                          headers(TENANT_A, null, k),
                          BodyPublishers.ofString(payment(ref, "10.00"))));
            }),
        withFreshKey(
            k -> {
              String ref = reference();
              return new Case(
                  "order of checks: no Authorization and a malformed key (401 first)",
                  401,
                  "AUTHENTICATION_REQUIRED",
                  List.of(k, "\"" + k),
                  ref,
                  t ->
                      t.exchange(
                          PAYMENTS,
                          List.of(
                              new String[] {"Content-Type", "application/json"},
                              new String[] {"Idempotency-Key", "\"" + k}),
                          BodyPublishers.ofString(payment(ref, "10.00"))));
            }),
        withFreshKey(
            k ->
                paymentCase(
                    "order of checks: a malformed key and an invalid body (the body first)",
                    400,
                    VALIDATION_FAILED,
                    k + "\"",
                    ref -> payment(ref, "-5.00"))),
        withFreshKey(
            k -> {
              String ref = reference();
              return new Case(
                  "order of checks: a malformed key and a body too large (413 first)",
                  413,
                  "PAYLOAD_TOO_LARGE",
                  List.of(k, k + "\""),
                  ref,
                  t ->
                      t.exchange(
                          PAYMENTS,
                          headers(TENANT_A, "application/json", k + "\""),
                          BodyPublishers.ofString(padded(ref, ONE_MB))));
            }),
        authCase("gate: no Authorization", null),
        authCase("gate: wrong API key", "Bearer sk_test_wrong"),
        authCase("gate: Basic instead of Bearer", "Basic c2tfdGVzdF9kZW1vX2E6"));
  }

  /** Bad requests to the order endpoints. */
  static Stream<Case> orderCases() {
    String confirmBody = "{\"amount\":\"10.00\",\"currency\":\"EUR\"}";
    return Stream.of(
        withFreshKey(
            k ->
                order(
                    "confirm-payment: order id is not a UUID",
                    400,
                    "INVALID_PATH_PARAMETER",
                    k,
                    id -> "/v1/orders/not-a-uuid/confirm-payment",
                    confirmBody)),
        withFreshKey(
            k ->
                order(
                    "confirm-payment: over-precise amount 10.001 EUR",
                    400,
                    VALIDATION_FAILED,
                    k,
                    BadInputIT::confirmPath,
                    "{\"amount\":\"10.001\",\"currency\":\"EUR\"}")),
        withFreshKey(
            k ->
                order(
                    "confirm-payment: unknown field",
                    400,
                    "UNKNOWN_FIELD",
                    k,
                    BadInputIT::confirmPath,
                    "{\"amount\":\"10.00\",\"currency\":\"EUR\",\"force\":true}")),
        withFreshKey(
            k ->
                order(
                    "confirm-payment: the currency twice",
                    400,
                    "DUPLICATE_FIELD",
                    k,
                    BadInputIT::confirmPath,
                    "{\"amount\":\"10.00\",\"currency\":\"EUR\",\"currency\":\"USD\"}")),
        withFreshKey(
            k ->
                order(
                    "confirm-payment: a list of keys (a, b)",
                    400,
                    KEY_INVALID,
                    k + ", " + newKey(),
                    BadInputIT::confirmPath,
                    confirmBody)),
        order(
            "confirm-payment: key absent",
            400,
            "IDEMPOTENCY_KEY_MISSING",
            null,
            BadInputIT::confirmPath,
            confirmBody),
        withFreshKey(
            k ->
                order(
                    "create order: no items",
                    400,
                    VALIDATION_FAILED,
                    k,
                    id -> ORDERS,
                    "{\"currency\":\"EUR\",\"items\":[]}")),
        withFreshKey(
            k ->
                order(
                    "create order: a null item",
                    400,
                    VALIDATION_FAILED,
                    k,
                    id -> ORDERS,
                    "{\"currency\":\"EUR\",\"items\":[null]}")),
        withFreshKey(
            k ->
                order(
                    "create order: quantity 0",
                    400,
                    VALIDATION_FAILED,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":0,\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: quantity is the string \"2\"",
                    400,
                    WRONG_TYPE,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":\"2\",\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: quantity is a word",
                    400,
                    WRONG_TYPE,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":\"many\",\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: quantity 2.5 (an integer field)",
                    400,
                    WRONG_TYPE,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":2.5,\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: quantity 2.0 (a float, not taken as 2)",
                    400,
                    WRONG_TYPE,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":2.0,\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: quantity 2e0 (exponent notation)",
                    400,
                    WRONG_TYPE,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":2e0,\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: quantity \"2.0\" (a string with a fraction)",
                    400,
                    WRONG_TYPE,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":\"2.0\",\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: unknown currency XYZ",
                    400,
                    VALIDATION_FAILED,
                    k,
                    id -> ORDERS,
                    items("XYZ", "{\"sku\":\"s\",\"quantity\":1,\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: sku with a NUL character",
                    400,
                    VALIDATION_FAILED,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\\u0000x\",\"quantity\":1,\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: sku with an unpaired surrogate \\ud800",
                    400,
                    VALIDATION_FAILED,
                    k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\\ud800x\",\"quantity\":1,\"unitPrice\":\"1.00\"}"))),
        withFreshKey(
            k ->
                order(
                    "create order: total beyond what an amount can hold",
                    400,
                    VALIDATION_FAILED,
                    k,
                    id -> ORDERS,
                    items(
                        "EUR",
                        String.join(
                            ",",
                            java.util.Collections.nCopies(
                                100,
                                "{\"sku\":\"s\",\"quantity\":10000,"
                                    + "\"unitPrice\":\"1000000000\"}"))))),
        withFreshKey(
            k ->
                order(
                    "create order: malformed optional key",
                    400,
                    KEY_INVALID,
                    "\"" + k,
                    id -> ORDERS,
                    items("EUR", "{\"sku\":\"s\",\"quantity\":1,\"unitPrice\":\"1.00\"}"))));
  }

  // ---------------------------------------------------------------------------------------------
  // Case builders

  private static <T> T withFreshKey(Function<String, T> build) {
    return build.apply(newKey());
  }

  private static String reference() {
    return "bad-" + UUID.randomUUID();
  }

  /** A valid payment sent with {@code headerValue} as its one Idempotency-Key field. */
  private static Case keyCase(String name, String headerValue, String... alsoCheck) {
    String ref = reference();
    List<String> keys = new ArrayList<>(List.of(alsoCheck));
    keys.add(headerValue);
    keys.add(headerValue.strip());
    return new Case(
        name,
        400,
        KEY_INVALID,
        List.copyOf(keys),
        ref,
        t -> t.postJson(PAYMENTS, TENANT_A, List.of(headerValue), payment(ref, "10.00")));
  }

  /** A valid payment whose Idempotency-Key field is these raw bytes, over a plain socket. */
  private static Case rawKeyCase(
      String name, String errorCode, byte[] headerValue, String... alsoCheck) {
    String ref = reference();
    List<String> keys = new ArrayList<>(List.of(alsoCheck));
    keys.add(new String(headerValue, StandardCharsets.ISO_8859_1));
    keys.add(new String(headerValue, StandardCharsets.UTF_8));
    return new Case(
        name,
        400,
        errorCode,
        List.copyOf(keys),
        ref,
        t ->
            t.raw(
                PAYMENTS,
                List.of(
                    ascii("Authorization: Bearer " + TENANT_A),
                    ascii("Content-Type: application/json"),
                    concat(ascii("Idempotency-Key: "), headerValue)),
                payment(ref, "10.00").getBytes(StandardCharsets.UTF_8)));
  }

  /** A payment body built from its reference, sent with a fresh valid key. */
  /**
   * A valid payment with a fresh key and one {@code Api-Version} header field per value of {@code
   * fields}: a version that is not one value is not canonical.
   */
  private static Case apiVersionCase(String name, String... fields) {
    return withFreshKey(
        k -> {
          String ref = reference();
          return new Case(
              name,
              400,
              "REQUEST_NOT_CANONICAL",
              List.of(k),
              ref,
              t -> {
                List<String[]> headers = headers(TENANT_A, "application/json", k);
                for (String field : fields) {
                  headers.add(new String[] {"Api-Version", field});
                }
                return t.exchange(
                    PAYMENTS, headers, BodyPublishers.ofString(payment(ref, "10.00")));
              });
        });
  }

  private static Case paymentCase(
      String name, int status, String errorCode, Function<String, String> body) {
    return withFreshKey(k -> paymentCase(name, status, errorCode, k, body));
  }

  private static Case paymentCase(
      String name, int status, String errorCode, String key, Function<String, String> body) {
    String ref = reference();
    List<String> keys = key == null ? List.of() : List.of(key);
    return new Case(
        name,
        status,
        errorCode,
        keys,
        ref,
        t -> t.postJson(PAYMENTS, TENANT_A, keys, body.apply(ref)));
  }

  private static Case blankReference() {
    return withFreshKey(
        k ->
            new Case(
                "body: blank merchantReference",
                400,
                VALIDATION_FAILED,
                List.of(k),
                "   ",
                t ->
                    t.postJson(
                        PAYMENTS,
                        TENANT_A,
                        List.of(k),
                        body("acc_1", "\"10.00\"", "\"EUR\"", "\"   \"", null))));
  }

  private static Case authCase(String name, String authorization) {
    return withFreshKey(
        k -> {
          String ref = reference();
          return new Case(
              name,
              401,
              "AUTHENTICATION_REQUIRED",
              List.of(k),
              ref,
              t -> {
                List<String[]> headers = new ArrayList<>();
                if (authorization != null) {
                  headers.add(new String[] {"Authorization", authorization});
                }
                headers.add(new String[] {"Content-Type", "application/json"});
                headers.add(new String[] {"Idempotency-Key", k});
                return t.exchange(
                    PAYMENTS, headers, BodyPublishers.ofString(payment(ref, "10.00")));
              });
        });
  }

  private static Case order(
      String name,
      int status,
      String errorCode,
      String key,
      Function<String, String> path,
      String body) {
    List<String> keys = key == null ? List.of() : List.of(key);
    return new Case(
        name,
        status,
        errorCode,
        keys,
        null,
        t -> t.postJson(path.apply(orderId), TENANT_A, keys, body));
  }

  private static String confirmPath(String orderId) {
    return "/v1/orders/" + orderId + "/confirm-payment";
  }

  private static String items(String currency, String items) {
    return "{\"currency\":\"" + currency + "\",\"items\":[" + items + "]}";
  }

  /**
   * A create-payment body of raw JSON values; a {@code null} leaves the field out. The strings are
   * JSON as they are sent ({@code "\"10.00\""}, {@code "true"}).
   */
  private static String body(
      String accountId, String amount, String currency, String reference, String channel) {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("accountId", accountId == null ? null : json(accountId));
    fields.put("amount", amount);
    fields.put("currency", currency);
    fields.put("merchantReference", reference);
    fields.put("channel", channel);
    StringBuilder b = new StringBuilder("{");
    fields.forEach(
        (name, value) -> {
          if (value != null) {
            b.append(b.length() > 1 ? "," : "")
                .append('"')
                .append(name)
                .append("\":")
                .append(value);
          }
        });
    return b.append('}').toString();
  }

  /** A JSON string literal. */
  private static String json(String text) {
    return JSON.writeValueAsString(text);
  }

  /** A valid payment padded past {@code size} bytes with whitespace, still valid JSON. */
  private static String padded(String ref, int size) {
    String body = payment(ref, "10.00");
    return body.substring(0, body.length() - 1) + " ".repeat(size) + "}";
  }

  private static List<String[]> headers(String apiKey, String contentType, String key) {
    List<String[]> headers = new ArrayList<>();
    headers.add(new String[] {"Authorization", "Bearer " + apiKey});
    if (contentType != null) {
      headers.add(new String[] {"Content-Type", contentType});
    }
    if (key != null) {
      headers.add(new String[] {"Idempotency-Key", key});
    }
    return headers;
  }

  // ---------------------------------------------------------------------------------------------
  // Sending

  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** A JSON POST with each of {@code keys} as its own Idempotency-Key header field. */
  Reply postJson(String path, String apiKey, List<String> keys, String json) {
    List<String[]> headers = headers(apiKey, "application/json", null);
    keys.forEach(k -> headers.add(new String[] {"Idempotency-Key", k}));
    return exchange(path, headers, BodyPublishers.ofString(json));
  }

  Reply exchange(String path, List<String[]> headers, BodyPublisher body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).POST(body);
    headers.forEach(h -> b.header(h[0], h[1]));
    return Reply.of(send(b.build()));
  }

  /**
   * A POST written byte for byte over a socket, for header values {@link java.net.http.HttpClient}
   * refuses to send. Each header line is given without its CRLF.
   */
  Reply raw(String path, List<byte[]> headerLines, byte[] body) {
    try (Socket socket = new Socket("localhost", port)) {
      socket.setSoTimeout(30_000);
      ByteArrayOutputStream request = new ByteArrayOutputStream();
      request.writeBytes(ascii("POST " + path + " HTTP/1.1\r\n"));
      request.writeBytes(ascii("Host: localhost:" + port + "\r\n"));
      for (byte[] line : headerLines) {
        request.writeBytes(line);
        request.writeBytes(ascii("\r\n"));
      }
      request.writeBytes(ascii("Content-Length: " + body.length + "\r\n"));
      request.writeBytes(ascii("Connection: close\r\n\r\n"));
      request.writeBytes(body);
      OutputStream out = socket.getOutputStream();
      out.write(request.toByteArray());
      out.flush();
      return parseResponse(socket.getInputStream().readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Any request written byte for byte ({@link RawHttp}): the target goes out exactly as given. */
  Reply rawExchange(String method, String target, String apiKey, String contentType, byte[] body) {
    List<String> headers = new ArrayList<>();
    if (apiKey != null) {
      headers.add("Authorization: Bearer " + apiKey);
    }
    if (contentType != null) {
      headers.add("Content-Type: " + contentType);
    }
    RawHttp.Reply r = RawHttp.exchange(port, method, target, headers, body);
    return new Reply(r.status(), r.headers(), r.body());
  }

  private static Reply parseResponse(byte[] bytes) throws IOException {
    String all = new String(bytes, StandardCharsets.ISO_8859_1);
    int end = all.indexOf("\r\n\r\n");
    assertThat(end).as("a complete HTTP response head in: " + all).isPositive();
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
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] both = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  private static String mediaType(String contentType) {
    if (contentType == null) {
      return null;
    }
    int semicolon = contentType.indexOf(';');
    return (semicolon < 0 ? contentType : contentType.substring(0, semicolon))
        .trim()
        .toLowerCase(Locale.ROOT);
  }

  private static JsonNode parse(String body) {
    try {
      JsonNode node = JSON.readTree(body);
      return node != null && node.isObject() ? node : null;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Every table a request could write to, with its row count. */
  private Map<String, Long> rowCounts() {
    Map<String, Long> counts = new LinkedHashMap<>();
    for (String table :
        List.of(
            "payment",
            "shop_order",
            "shop_order_item",
            "idemkit_record",
            "idemkit_record_history")) {
      counts.put(table, count(table));
    }
    return counts;
  }

  private long count(String table) {
    return jdbc.sql("select count(*) from " + table).query(Long.class).single();
  }

  /** The states of the records of a key, for failure messages. */
  private List<String> recordStates(String key) {
    return jdbc.sql("select state from idemkit_record where idem_key = ?")
        .param(key)
        .query(String.class)
        .list();
  }

  private Map<String, Object> orderRow() {
    return jdbc.sql("select status, paid_at from shop_order where id = ?::uuid")
        .param(orderId)
        .query()
        .singleRow();
  }
}
