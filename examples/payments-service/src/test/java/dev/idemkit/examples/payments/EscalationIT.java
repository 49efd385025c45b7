package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.demo.EmbeddedProvider;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An unknown outcome that stays unknown: recovery backs off, gives up after its limit and flags the
 * record for an operator, who resolves it over HTTP (applied with the charge id, or not applied so
 * the call runs again), with who and why in the record's history. Tenants cannot.
 */
@TestPropertySource(
    properties = {
      // Long enough for an operator's list to catch a payment between two attempts; short
      // enough that the third (the last) comes while the provider still refuses lookups (5 s).
      "idemkit.recovery.backoff=PT1S",
      "idemkit.recovery.max-attempts=3",
      "payments.provider.embedded-port=0"
    })
@DirtiesContext
class EscalationIT extends HttpTestSupport {

  static final String ADMIN = "sk_test_admin";

  @Autowired EmbeddedProvider provider;
  @Autowired DataSource dataSource;

  private HttpResponse<String> pay(String key, String ref, String fault) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/v1/payments"))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + TENANT_A)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(payment(ref, "10.00")));
    if (fault != null) {
      b.header("X-Provider-Fault", fault);
    }
    return send(b.build());
  }

  private HttpResponse<String> resolve(String key, String apiKey, String json) {
    return post(
        "/v1/admin/idempotency/records/tenant_demo_a/create_payment/" + key + "/resolution",
        apiKey,
        null,
        json);
  }

  private String state(String key) {
    return jdbc.sql("select state from idemkit_record where idem_key = ?")
        .param(key)
        .query(String.class)
        .single();
  }

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private boolean escalated(String key) {
    return listed(operatorsList(), "escalated", key) != null;
  }

  /** The operators' list of records needing attention. */
  private JsonNode operatorsList() {
    HttpResponse<String> list = get("/v1/admin/idempotency/recovery", ADMIN);
    assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
    return JSON.readTree(list.body());
  }

  /** The entry of {@code key} in the list's {@code part}, or null. */
  private static JsonNode listed(JsonNode list, String part, String key) {
    for (JsonNode entry : list.get(part)) {
      if (entry.get("key").asString().equals(key)) {
        return entry;
      }
    }
    return null;
  }

  private List<Map<String, Object>> history(String key) {
    return jdbc.sql(
            "select event, actor, reason from idemkit_record_history where idem_key = ? order by id")
        .param(key)
        .query()
        .listOfRows();
  }

  private String charges(String paymentId) {
    return send(HttpRequest.newBuilder(
                URI.create(provider.baseUrl() + "/charges?reference=" + paymentId))
            .build())
        .body();
  }

  private static void eventually(Supplier<Boolean> condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.get()) {
      assertThat(System.nanoTime()).as("condition not reached in 30 s").isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /** A charge whose answer was lost while the provider refuses lookups: escalated. */
  private String escalatedPayment(String key, String ref) throws Exception {
    assertThat(pay(key, ref, "drop-after-charge,lookup-unavailable").statusCode()).isEqualTo(409);
    eventually(
        () ->
            jdbc.sql("select escalated_at is not null from idemkit_record where idem_key = ?")
                .param(key)
                .query(Boolean.class)
                .single());
    assertThat(state(key)).isEqualTo("UNKNOWN_REQUIRES_RECOVERY");
    assertThat(escalated(key)).as("in the operators' list").isTrue();
    int attempts =
        jdbc.sql("select recovery_attempts from idemkit_record where idem_key = ?")
            .param(key)
            .query(Integer.class)
            .single();
    // Other test contexts' workers may also try it (each instance may), so at least the limit.
    assertThat(attempts).as("stopped at the limit").isGreaterThanOrEqualTo(3);
    assertThat(history(key)).filteredOn(h -> "ESCALATED".equals(h.get("event"))).hasSize(1);
    return jdbc.sql("select id::text from payment where merchant_reference = ?")
        .param(ref)
        .query(String.class)
        .single();
  }

  /**
   * A retry of an escalated payment is told the truth: its outcome awaits an operator (not "is
   * being recovered"), and to come back in a minute at the soonest, since it will not settle by
   * itself; still the same 409 errorCode, so clients keep retrying with the same key.
   */
  @Test
  void aRetryOfAnEscalatedPaymentIsToldItAwaitsAnOperator() throws Exception {
    String key = newKey();
    escalatedPayment(key, "esc-retry-" + key);

    HttpResponse<String> retry = pay(key, "esc-retry-" + key, null);

    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(409);
    assertThat(retry.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
    assertThat(retry.body())
        .contains("\"errorCode\":\"IDEMPOTENCY_OUTCOME_PENDING\"")
        .contains("\"title\":\"Outcome awaits an operator\"")
        .contains("awaits an operator's resolution")
        .doesNotContain("being recovered");
    assertThat(Long.parseLong(retry.headers().firstValue("Retry-After").orElseThrow()))
        .isGreaterThanOrEqualTo(60);
    assertThat(state(key)).isEqualTo("UNKNOWN_REQUIRES_RECOVERY");
  }

  /**
   * A payment whose outcome stays unknown is in the operators' list the whole time: between two
   * automatic attempts under {@code waiting} (with its attempts and when the next one is due), then
   * under {@code escalated}; each entry says which ({@code attention}). It was in no list while it
   * waited out its back-off, so an operator looking then saw nothing wrong.
   */
  @Test
  void operatorsSeeAPaymentWaitingForItsNextRecoveryAttemptThenEscalated() throws Exception {
    String key = newKey();
    assertThat(pay(key, "esc-waiting-" + key, "drop-after-charge,lookup-unavailable").statusCode())
        .isEqualTo(409);

    JsonNode[] waiting = new JsonNode[1];
    eventually(
        () -> {
          JsonNode list = operatorsList();
          waiting[0] = listed(list, "waiting", key);
          if (waiting[0] != null) {
            assertThat(listed(list, "escalated", key)).as("not escalated yet").isNull();
            assertThat(listed(list, "records", key)).as("not due now").isNull();
          }
          return waiting[0] != null;
        });
    JsonNode entry = waiting[0];
    assertThat(entry.get("attention").asString()).isEqualTo("WAITING_FOR_NEXT_ATTEMPT");
    assertThat(entry.get("state").asString()).isEqualTo("UNKNOWN_REQUIRES_RECOVERY");
    assertThat(entry.get("recoveryAttempts").asInt()).isGreaterThanOrEqualTo(2);
    assertThat(Instant.parse(entry.get("nextAttemptAt").asString()))
        .as("the next attempt comes after the back-off that began with the last one")
        .isAfter(Instant.parse(entry.get("updatedAt").asString()));
    assertThat(entry.get("lockedUntil").asString())
        .as("a live record shows its run in flight: the back-off is its lease")
        .isEqualTo(entry.get("nextAttemptAt").asString());
    assertThat(entry.get("recoveryPoint").asString()).isEqualTo("LOCAL_PAYMENT_CREATED");
    assertThat(entry.has("pendingExternal")).isTrue();

    eventually(() -> escalated(key));
    JsonNode list = operatorsList();
    assertThat(listed(list, "escalated", key).get("attention").asString())
        .isEqualTo("AWAITING_OPERATOR");
    assertThat(listed(list, "waiting", key)).as("escalated, no longer waiting").isNull();
    assertThat(list.get("waitingCount").asInt()).isEqualTo(list.get("waiting").size());
  }

  /**
   * Two resolutions of one payment before recovery acts on the first: the same one again (a retried
   * request) is answered as the first, a different one is refused with 409 RESOLUTION_CONFLICT, and
   * neither changes anything: the payment completes with the first's charge id, and the history
   * holds the first resolution alone. The second merged into the first before (the later outcome
   * and reference won, silently). The test holds the payment's row meanwhile, so that recovery
   * cannot finish the first resolution before the others arrive.
   */
  @Test
  void aSecondResolutionBeforeTheFirstIsActedOnIsAnsweredAsTheFirstOrRefused() throws Exception {
    String key = newKey();
    String ref = "esc-twice-" + key;
    String paymentId = escalatedPayment(key, ref);
    String first =
        """
        {"outcome":"APPLIED","externalReference":"ch_first","reason":"charge seen in the dashboard"}""";

    try (Connection held = dataSource.getConnection()) {
      held.setAutoCommit(false);
      try (PreparedStatement lock =
          held.prepareStatement("select id from payment where id = ?::uuid for update")) {
        lock.setString(1, paymentId);
        lock.executeQuery().close();
      }
      HttpResponse<String> resolved = resolve(key, ADMIN, first);
      assertThat(resolved.statusCode()).as(resolved.body()).isEqualTo(200);

      HttpResponse<String> repeat = resolve(key, ADMIN, first);
      assertThat(repeat.statusCode()).as("the same resolution again").isEqualTo(200);
      assertThat(repeat.body()).contains("OPERATOR_RESOLVED_APPLIED");

      for (String other :
          List.of(
              "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"no charge found by support\"}",
              "{\"outcome\":\"APPLIED\",\"externalReference\":\"ch_other\","
                  + "\"reason\":\"another charge\"}")) {
        HttpResponse<String> refused = resolve(key, ADMIN, other);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
        assertThat(refused.headers().firstValue("Content-Type"))
            .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(refused.body())
            .contains("\"errorCode\":\"RESOLUTION_CONFLICT\"")
            .contains("Nothing changed");
      }
      held.rollback();
    }

    eventually(() -> state(key).equals("COMPLETED"));
    assertThat(
            jdbc.sql("select provider_charge_id from payment where id = ?::uuid")
                .param(paymentId)
                .query(String.class)
                .single())
        .isEqualTo("ch_first");
    assertThat(history(key))
        .filteredOn(h -> String.valueOf(h.get("event")).startsWith("OPERATOR_RESOLVED"))
        .singleElement()
        .satisfies(h -> assertThat(h.get("reason")).isEqualTo("charge seen in the dashboard"));
    assertThat(charges(paymentId)).contains("\"succeeded\":1");
  }

  @Test
  void anOperatorSaysAppliedWithTheChargeIdAndThePaymentCompletesWithIt() throws Exception {
    String key = newKey();
    String ref = "esc-applied-" + key;
    String paymentId = escalatedPayment(key, ref);
    String body =
        """
        {"outcome":"APPLIED","externalReference":"ch_from_dashboard","reason":"charge seen in the provider dashboard"}""";

    HttpResponse<String> asTenant = resolve(key, TENANT_A, body);
    assertThat(asTenant.statusCode()).as("tenant keys are refused").isEqualTo(403);
    assertThat(state(key)).isEqualTo("UNKNOWN_REQUIRES_RECOVERY");

    HttpResponse<String> resolved = resolve(key, ADMIN, body);
    assertThat(resolved.statusCode()).as(resolved.body()).isEqualTo(200);
    assertThat(resolved.body()).contains("OPERATOR_RESOLVED_APPLIED");

    eventually(() -> state(key).equals("COMPLETED"));
    // Recovery data is encrypted at rest in this service: the charge id the operator gave too.
    assertThat(
            jdbc.sql("select recovery_data from idemkit_record where idem_key = ?")
                .param(key)
                .query(String.class)
                .single())
        .contains("~sealed")
        .doesNotContain("ch_from_dashboard");
    HttpResponse<String> retry = pay(key, ref, null);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).contains(paymentId);
    assertThat(
            jdbc.sql("select provider_charge_id from payment where id = ?::uuid")
                .param(paymentId)
                .query(String.class)
                .single())
        .isEqualTo("ch_from_dashboard");
    assertThat(history(key))
        .filteredOn(h -> "OPERATOR_RESOLVED_APPLIED".equals(h.get("event")))
        .singleElement()
        .satisfies(
            h -> {
              assertThat(h.get("actor")).isEqualTo("admin:demo_operator");
              assertThat(h.get("reason")).isEqualTo("charge seen in the provider dashboard");
            });
    assertThat(escalated(key)).isFalse();
    assertThat(charges(paymentId)).contains("\"succeeded\":1");
  }

  @Test
  void anOperatorSaysNotAppliedAndTheCallRunsAgainUnderTheSameKeyChargingOnce() throws Exception {
    String key = newKey();
    String ref = "esc-not-applied-" + key;
    String paymentId = escalatedPayment(key, ref);

    HttpResponse<String> invalid =
        resolve(key, ADMIN, "{\"outcome\":\"APPLIED\",\"reason\":\"no reference\"}");
    assertThat(invalid.statusCode()).isEqualTo(422);
    HttpResponse<String> resolved =
        resolve(
            key, ADMIN, "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"no charge found by support\"}");
    assertThat(resolved.statusCode()).as(resolved.body()).isEqualTo(200);

    // The call runs again with the derived provider key: the provider answers with the charge it
    // already made (the operator was wrong), so nothing is charged twice.
    eventually(() -> state(key).equals("COMPLETED"));
    HttpResponse<String> retry = pay(key, ref, null);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(charges(paymentId)).contains("\"succeeded\":1");
    assertThat(history(key))
        .filteredOn(h -> "OPERATOR_RESOLVED_NOT_APPLIED".equals(h.get("event")))
        .singleElement()
        .satisfies(h -> assertThat(h.get("actor")).isEqualTo("admin:demo_operator"));
    HttpResponse<String> again =
        resolve(key, ADMIN, "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"twice\"}");
    assertThat(again.statusCode()).as("a finished record takes no resolution").isEqualTo(409);
    assertThat(again.body()).contains("RECORD_NOT_AWAITING_RESOLUTION");
  }

  /**
   * A key is any visible ASCII text; one holding '/' or '%' cannot be a path segment (the gate
   * refuses it), so its record is read and resolved with the key in the query.
   */
  @Test
  void aRecordWhoseKeyAPathCannotCarryIsReadAndResolvedWithTheKeyInTheQuery() throws Exception {
    String key = "orders/" + newKey() + "/50%";
    String ref = "esc-slash-" + newKey();
    escalatedPayment(key, ref);
    String base = "/v1/admin/idempotency/records/tenant_demo_a/create_payment";
    String query = "?key=" + URLEncoder.encode(key, StandardCharsets.UTF_8);

    HttpResponse<String> inPath =
        get(base + "/" + key.replace("%", "%25").replace("/", "%2F"), ADMIN);
    assertThat(inPath.statusCode()).as("the path form cannot carry it").isEqualTo(400);
    HttpResponse<String> read = get(base + query, ADMIN);
    assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
    assertThat(read.body()).contains("UNKNOWN_REQUIRES_RECOVERY").contains("\"ESCALATED\"");
    String verdict = "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"no charge found\"}";
    assertThat(post(base + "/resolution" + query, TENANT_A, null, verdict).statusCode())
        .as("tenant keys are refused")
        .isEqualTo(403);

    HttpResponse<String> resolved = post(base + "/resolution" + query, ADMIN, null, verdict);

    assertThat(resolved.statusCode()).as(resolved.body()).isEqualTo(200);
    assertThat(resolved.body()).contains("OPERATOR_RESOLVED_NOT_APPLIED");
    eventually(() -> state(key).equals("COMPLETED"));
    assertThat(pay(key, ref, null).statusCode()).isEqualTo(201);
  }
}
