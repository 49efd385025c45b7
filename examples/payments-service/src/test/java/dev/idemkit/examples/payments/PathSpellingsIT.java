package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.web.OperatorPrincipal;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockMvcRequestBuilders;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

/**
 * The gate and the router must read one request as one path. Every other spelling of an operator
 * endpoint (matrix parameters in each segment, percent-encoding, dot segments, double and trailing
 * slashes, case, an absolute-form target) is sent byte for byte, with no key and with a tenant's
 * key: none may reach an operator or management endpoint, none may be a 5xx, and every answer is a
 * problem body, whether the gate refused it or Tomcat did before any filter ran.
 */
class PathSpellingsIT extends HttpTestSupport {

  @Autowired WebApplicationContext context;

  /** The key of tenant B's payment, whose record an operator lookup would show. */
  private static final String B_KEY = "spellings-" + UUID.randomUUID();

  private static boolean paid;

  /** What each spelling got, printed once at the end. */
  private static final Map<String, String> SEEN = new ConcurrentSkipListMap<>();

  private static final String RECOVERY = "/v1/admin/idempotency/recovery";
  private static final String RECORD =
      "/v1/admin/idempotency/records/tenant_demo_b/create_payment/";

  enum Caller {
    NO_KEY(null),
    TENANT_KEY(TENANT_A);

    final String apiKey;

    Caller(String apiKey) {
      this.apiKey = apiKey;
    }
  }

  /** Spellings of operator and management endpoints; {@code {port}} is the server's port. */
  static List<String> operatorSpellings() {
    return List.of(
        // matrix parameters, in each segment and trailing
        "/v1;x/admin/idempotency/recovery",
        "/;x/v1/admin/idempotency/recovery",
        "/v1/admin;x/idempotency/recovery",
        "/v1/admin/idempotency;x/recovery",
        "/v1/admin/idempotency/recovery;x",
        "/v1/admin/idempotency/recovery;",
        "/v1;jsessionid=0123/admin/idempotency/recovery",
        "/v1/admin/idempotency/records;x/tenant_demo_b/create_payment/" + B_KEY,
        "/v1/admin/idempotency/records/tenant_demo_b;x/create_payment/" + B_KEY,
        RECORD + B_KEY + ";x",
        // percent-encoding
        "/v1/%61dmin/idempotency/recovery",
        "/v1/%61%64%6d%69%6e/idempotency/recovery",
        "/%76%31/admin/idempotency/recovery",
        "/v1/admin/idempotency/recover%79",
        "/v1/admin/idempotency/recovery%3Bx",
        "/v1/%2561dmin/idempotency/recovery",
        "/v1%2Fadmin/idempotency/recovery",
        "/v1%2fadmin%2fidempotency%2frecovery",
        "/v1%5Cadmin/idempotency/recovery",
        "/v1/admin/idempotency/recovery%00",
        "/v1/%c0%ae%c0%ae/v1/admin/idempotency/recovery",
        // dot segments, encoded or not
        "/v1/x/../admin/idempotency/recovery",
        "/v1/./admin/idempotency/recovery",
        "/v1/admin/idempotency/./recovery",
        "/v1/x/%2e%2e/admin/idempotency/recovery",
        "/v1/x/%2E%2E/admin/idempotency/recovery",
        "/v1/x/.%2e/admin/idempotency/recovery",
        "/v1/x/..;/admin/idempotency/recovery",
        "/v1/payments/..;/../admin/idempotency/recovery",
        "/v1/admin/idempotency/recovery/.",
        // slashes
        "//v1/admin/idempotency/recovery",
        "/v1//admin/idempotency/recovery",
        "/v1/admin/idempotency/recovery/",
        "/v1/admin/idempotency/recovery//",
        "/v1\\admin\\idempotency\\recovery",
        // case
        "/V1/ADMIN/IDEMPOTENCY/RECOVERY",
        "/v1/Admin/idempotency/recovery",
        // absolute-form request target
        "http://localhost:{port}/v1;x/admin/idempotency/recovery",
        "http://localhost:{port}/v1/%61dmin/idempotency/recovery",
        // the canonical spelling itself (no key: 401; a tenant's key: 403)
        RECOVERY,
        RECORD + B_KEY,
        // management: metrics take the operator key
        "/actuator/prometheus",
        "/actuator;x/prometheus",
        "/actuator/prometheus;",
        "/actuator/%70rometheus",
        "/actuator/health/../prometheus",
        "/actuator/health/..;/prometheus",
        "/actuator/health%2F..%2Fprometheus",
        "/actuator//prometheus",
        "/ACTUATOR/PROMETHEUS",
        "/actuator");
  }

  /** The spellings above that are plain: the gate lets them through to its key check. */
  private static final List<String> PLAIN =
      List.of(
          RECOVERY,
          RECORD + B_KEY,
          "/V1/ADMIN/IDEMPOTENCY/RECOVERY",
          "/v1/Admin/idempotency/recovery",
          "/actuator/prometheus",
          "/ACTUATOR/PROMETHEUS",
          "/actuator");

  static Stream<Arguments> spellingsAndCallers() {
    List<Arguments> all = new ArrayList<>();
    for (String target : operatorSpellings()) {
      for (Caller caller : Caller.values()) {
        all.add(Arguments.of(target, caller));
      }
    }
    return all.stream();
  }

  @BeforeEach
  void aRecordOfTenantB() {
    if (!paid) {
      HttpResponse<String> r =
          post("/v1/payments", TENANT_B, B_KEY, payment("spellings-" + B_KEY, "10.00"));
      assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
      paid = true;
    }
  }

  @AfterAll
  static void printWhatEachSpellingGot() {
    StringBuilder table = new StringBuilder("Path spellings and their answers:\n");
    SEEN.forEach(
        (spelling, answer) ->
            table.append("  ").append(answer).append("  ").append(spelling).append('\n'));
    System.out.println(table);
  }

  private RawHttp.Reply send(String method, String target, String apiKey, byte[] body) {
    List<String> headers = new ArrayList<>();
    if (apiKey != null) {
      headers.add("Authorization: Bearer " + apiKey);
    }
    if (body != null) {
      headers.add("Content-Type: application/json");
    }
    return RawHttp.exchange(
        port, method, target.replace("{port}", String.valueOf(port)), headers, body);
  }

  @ParameterizedTest(name = "{1} GET {0}")
  @MethodSource("spellingsAndCallers")
  void noSpellingReachesAnOperatorEndpointNorFails(String target, Caller caller) {
    RawHttp.Reply r = send("GET", target, caller.apiKey, null);

    String errorCode = errorCode(r.body());
    SEEN.put(
        target + " [" + caller + "]", r.status() + " " + (errorCode == null ? "-" : errorCode));
    String what = caller + " GET " + target + " answered " + r.status() + " " + r.body();
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(r.status()).as(what).isIn(400, 401, 403, 404);
    if (PLAIN.contains(target)) {
      soft.assertThat(r.status()).as(what).isEqualTo(caller == Caller.NO_KEY ? 401 : 403);
    } else if (target.contains("\\")) {
      // A raw backslash is not HTTP: Tomcat refuses the request line before reading a path.
      soft.assertThat(r.status()).as(what).isEqualTo(400);
      soft.assertThat(errorCode).as("errorCode of " + what).isEqualTo("MALFORMED_REQUEST");
    } else {
      // Refused for its spelling, by the gate or by Tomcat before it.
      soft.assertThat(r.status()).as(what).isEqualTo(400);
      soft.assertThat(errorCode).as("errorCode of " + what).isEqualTo("MALFORMED_PATH");
    }
    soft.assertThat(r.header("Content-Type")).as(what).startsWith("application/problem+json");
    soft.assertThat(errorCode).as("errorCode of " + what).isNotBlank();
    soft.assertThat(r.body())
        .as(what)
        .doesNotContain("\"records\"")
        .doesNotContain("fencingToken")
        .doesNotContain(B_KEY)
        .doesNotContain("idempotency_");
    soft.assertAll();
  }

  @Test
  void theOperatorKeyStillOpensTheCanonicalPaths() {
    RawHttp.Reply list = send("GET", RECOVERY, ProviderFailuresIT.ADMIN, null);
    RawHttp.Reply record = send("GET", RECORD + B_KEY, ProviderFailuresIT.ADMIN, null);
    RawHttp.Reply metrics = send("GET", "/actuator/prometheus", ProviderFailuresIT.ADMIN, null);
    RawHttp.Reply otherSpelling =
        send("GET", "/v1/%61dmin/idempotency/recovery", ProviderFailuresIT.ADMIN, null);

    assertThat(list.status()).as(list.body()).isEqualTo(200);
    assertThat(list.body()).contains("\"records\"");
    assertThat(record.status()).as(record.body()).isEqualTo(200);
    assertThat(record.body()).contains(B_KEY).contains("\"state\":\"COMPLETED\"");
    assertThat(metrics.status()).isEqualTo(200);
    assertThat(metrics.body()).contains("idempotency_");
    assertThat(otherSpelling.status()).isEqualTo(400);
    assertThat(errorCode(otherSpelling.body())).isEqualTo("MALFORMED_PATH");
  }

  /**
   * Defence in depth: the admin endpoints refuse anyone but an operator by themselves. The
   * dispatcher is driven here with no filter at all, as if the gate had let the request through.
   */
  @Test
  void withoutTheGateTheAdminEndpointsStillRefuseTenantsAndAnonymousCallers() throws Exception {
    MockMvc noGate = MockMvcBuilders.webAppContextSetup(context).build();
    Principal tenant = () -> "tenant_demo_a";
    Principal operator = new OperatorPrincipal("demo_operator");

    for (String path : List.of(RECOVERY, RECORD + B_KEY)) {
      MockHttpServletResponse asTenant =
          noGate
              .perform(MockMvcRequestBuilders.get(path).principal(tenant))
              .andReturn()
              .getResponse();
      MockHttpServletResponse anonymous =
          noGate.perform(MockMvcRequestBuilders.get(path)).andReturn().getResponse();
      MockHttpServletResponse asOperator =
          noGate
              .perform(MockMvcRequestBuilders.get(path).principal(operator))
              .andReturn()
              .getResponse();

      assertThat(asTenant.getStatus()).as(path).isEqualTo(403);
      assertThat(asTenant.getContentAsString()).contains("FORBIDDEN").doesNotContain(B_KEY);
      assertThat(anonymous.getStatus()).as(path).isEqualTo(403);
      assertThat(asOperator.getStatus()).as(path).isEqualTo(200);
    }
  }

  @Test
  void aMatrixParameterOnAPaymentPathIsA400NotA500() {
    HttpResponse<String> created =
        post("/v1/payments", TENANT_A, newKey(), payment("matrix-" + newKey(), "10.00"));
    String location = created.headers().firstValue("Location").orElseThrow();
    String id = location.substring(location.lastIndexOf('/') + 1);

    for (String target :
        List.of("/v1;x/payments/" + id, "/v1/payments;x/" + id, "/v1/payments/" + id + ";x")) {
      RawHttp.Reply r = send("GET", target, TENANT_A, null);
      assertThat(r.status()).as(target + " " + r.body()).isEqualTo(400);
      assertThat(errorCode(r.body())).as(target).isEqualTo("MALFORMED_PATH");
    }
    assertThat(send("GET", "/v1/payments/" + id, TENANT_A, null).status()).isEqualTo(200);
  }

  /**
   * Plain paths that a tenant may send and that no handler can serve: the container's error page
   * asked for directly, and ids that decode to blanks. A 4xx problem, never a 5xx.
   */
  @Test
  void theErrorPageAndBlankIdsAreClientErrorsNot500() {
    for (String method : List.of("GET", "POST", "HEAD")) {
      RawHttp.Reply error =
          send(method, "/error", TENANT_A, "POST".equals(method) ? new byte[0] : null);
      assertThat(error.status()).as(method + " /error " + error.body()).isEqualTo(404);
      if (!"HEAD".equals(method)) {
        assertThat(errorCode(error.body())).isEqualTo("NOT_FOUND");
      }
    }
    assertThat(send("GET", "/error", null, null).status()).isEqualTo(401);
    RawHttp.Reply noGroup = send("GET", "/actuator/health/no-such-group", null, null);
    assertThat(noGroup.status()).isEqualTo(404);
    assertThat(errorCode(noGroup.body())).isEqualTo("NOT_FOUND");
    assertThat(noGroup.body()).as("not called invalid HTTP").doesNotContain("HTTP/1.1");

    for (String target :
        List.of("/v1/payments/%20", "/v1/orders/%20", "/v1/payments/%20%20", "/v1/orders/%09")) {
      RawHttp.Reply r = send("GET", target, TENANT_A, null);
      assertThat(r.status()).as(target + " " + r.body()).isEqualTo(400);
      assertThat(r.header("Content-Type")).as(target).startsWith("application/problem+json");
    }
    String key = newKey();
    List<String> headers =
        List.of(
            "Authorization: Bearer " + TENANT_A,
            "Content-Type: application/json",
            "Idempotency-Key: " + key);
    RawHttp.Reply confirm =
        RawHttp.exchange(
            port,
            "POST",
            "/v1/orders/%20/confirm-payment",
            headers,
            "{\"amount\":\"25.00\",\"currency\":\"EUR\"}".getBytes(StandardCharsets.UTF_8));
    assertThat(confirm.status()).as(confirm.body()).isEqualTo(400);
    assertThat(recordsFor(key)).isZero();
  }

  @Test
  void theBodyLimitHoldsForEverySpelling() {
    for (String target :
        List.of(
            "/v1/payments",
            "/v1;x/payments",
            "/v1/%70ayments",
            "/V1/PAYMENTS",
            "/v1/payments/",
            "/v1/orders/x/../../payments")) {
      String ref = "limit-" + UUID.randomUUID();
      String json = payment(ref, "10.00");
      byte[] big =
          (json.substring(0, json.length() - 1) + " ".repeat(1024 * 1024) + "}")
              .getBytes(StandardCharsets.UTF_8);
      List<String> headers =
          List.of(
              "Authorization: Bearer " + TENANT_A,
              "Content-Type: application/json",
              "Idempotency-Key: " + newKey());

      RawHttp.Reply r = RawHttp.exchange(port, "POST", target, headers, big);

      assertThat(r.status()).as(target + " " + r.body()).isIn(400, 413);
      assertThat(r.header("Content-Type")).as(target).startsWith("application/problem+json");
      assertThat(paymentsFor(ref)).as(target).isZero();
    }
  }

  private static String errorCode(String body) {
    int at = body.indexOf("\"errorCode\":\"");
    if (at < 0) {
      return null;
    }
    int start = at + "\"errorCode\":\"".length();
    return body.substring(start, body.indexOf('"', start));
  }
}
