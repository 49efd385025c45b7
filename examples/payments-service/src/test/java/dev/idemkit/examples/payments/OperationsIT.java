package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** What operators and API consumers read: the OpenAPI contract, health, meters. */
class OperationsIT extends HttpTestSupport {

  private HttpResponse<String> open(String path) {
    return send(HttpRequest.newBuilder(uri(path)).GET().build());
  }

  @Test
  void theOpenApiDocumentStatesTheIdempotencyContractPerEndpoint() {
    HttpResponse<String> doc = open("/v3/api-docs");

    assertThat(doc.statusCode()).isEqualTo(200);
    String body = doc.body();
    int payments = body.indexOf("\"/v1/payments\"");
    int confirm = body.indexOf("\"/v1/orders/{orderId}/confirm-payment\"");
    assertThat(payments).isNotNegative();
    assertThat(confirm).isNotNegative();
    assertThat(body)
        .contains("\"name\":\"Idempotency-Key\"")
        .contains("expiry window PT24H")
        .contains("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST")
        .contains("IDEMPOTENCY_REQUEST_IN_PROGRESS")
        .contains("Retry-After")
        .contains("MALFORMED_PATH")
        .contains("PAYMENT_ABANDONED");
  }

  @Test
  void everyErrorCodeInTheDocumentIsExplainedAndTheRealNotFoundAnswersAreListed() {
    JsonNode paths = JsonMapper.shared().readTree(open("/v3/api-docs").body()).path("paths");
    java.util.List<String> unexplained = new java.util.ArrayList<>();
    java.util.List<String> idempotentWithout410 = new java.util.ArrayList<>();
    for (var path : paths.properties()) {
      for (var op : path.getValue().properties()) {
        String where = op.getKey().toUpperCase(java.util.Locale.ROOT) + " " + path.getKey();
        JsonNode responses = op.getValue().path("responses");
        for (var response : responses.properties()) {
          JsonNode examples =
              response.getValue().path("content").path("application/problem+json").path("examples");
          for (var example : examples.properties()) {
            if (example.getValue().path("summary").asString("").equals(example.getKey())) {
              unexplained.add(where + " " + response.getKey() + " " + example.getKey());
            }
          }
        }
        if (op.getValue().has("x-idempotency")
            && !responses.path("410").toString().contains("IDEMPOTENCY_RECORD_UNREADABLE")) {
          idempotentWithout410.add(where);
        }
      }
    }
    assertThat(unexplained).as("error codes documented by their bare name").isEmpty();
    assertThat(idempotentWithout410).as("idempotent operations without their 410").isEmpty();
    assertThat(
            paths
                .path("/v1/orders/{orderId}/shipment")
                .path("get")
                .path("responses")
                .path("404")
                .toString())
        .contains("ORDER_NOT_FOUND", "SHIPMENT_NOT_FOUND");
    assertThat(
            paths
                .path("/v1/payments/{paymentId}/ledger-entries")
                .path("get")
                .path("responses")
                .path("404")
                .toString())
        .contains("PAYMENT_NOT_FOUND");
    assertThat(paths.path("/v1/receipts").path("get").path("responses").path("404").toString())
        .contains("PAYMENT_NOT_FOUND");
  }

  @Test
  void theDemoFaultHeadersRefusalIsDocumentedOnTheOperationsThatCallTheProvider() {
    JsonNode paths = JsonMapper.shared().readTree(open("/v3/api-docs").body()).path("paths");

    // The demo filter's own answer (FilterAnswers), not an annotation of the payments controller.
    assertThat(
            paths
                .path("/v1/payments")
                .path("post")
                .path("responses")
                .path("400")
                .path("content")
                .path("application/problem+json")
                .path("examples")
                .has("UNKNOWN_PROVIDER_FAULT"))
        .isTrue();
    assertThat(paths.path("/v1/orders").path("post").path("responses").path("400").toString())
        .contains("VALIDATION_FAILED")
        .doesNotContain("UNKNOWN_PROVIDER_FAULT");
  }

  @Test
  void healthAndIdempotencyMetersAreExposed() {
    post("/v1/payments", TENANT_A, newKey(), payment("ops-" + newKey(), "10.00"));

    assertThat(open("/actuator/health").body()).contains("\"status\":\"UP\"");
    String metrics = get("/actuator/prometheus", ProviderFailuresIT.ADMIN).body();
    assertThat(metrics)
        .contains(
            "idempotency_requests_seconds_count{operation=\"create_payment\",outcome=\"executed\"}")
        .contains("idempotency_replay_count_total")
        .contains("idempotency_conflict_different_request_count_total")
        .contains("idempotency_in_progress_age_max_seconds")
        .contains("idempotency_expired_retry_count_total")
        .contains("idempotency_unknown_state_count_total")
        .doesNotContain("tenant_demo_a");
    // The events' failure counters exist before any failure (0), so a rate over them reads 0.
    for (String consumer : List.of("ledger", "receipts", "shipping")) {
      assertThat(metrics)
          .containsPattern("inbox_consume_failed_count_total\\{[^}]*consumer=\"" + consumer + "\"")
          .containsPattern(
              "inbox_duplicates_skipped_count_total\\{[^}]*consumer=\"" + consumer + "\"");
    }
    assertThat(metrics).contains("outbox_publish_failed_count_total");
  }

  @Test
  void aQueryParameterOfTheWrongTypeIsNamedAsOne() {
    for (String limit : List.of("abc", "99999999999")) {
      HttpResponse<String> r =
          get("/v1/admin/idempotency/recovery?limit=" + limit, ProviderFailuresIT.ADMIN);
      assertThat(r.statusCode()).as(limit).isEqualTo(400);
      assertThat(r.body())
          .as(limit)
          .contains("\"errorCode\":\"INVALID_QUERY_PARAMETER\"")
          .contains("limit must be a whole number")
          .doesNotContain("path");
    }
  }

  @Test
  void healthIsOpenButMetricsAndEveryOtherManagementEndpointTakeTheOperatorKey() {
    HttpResponse<String> anonymous = open("/actuator/prometheus");
    HttpResponse<String> tenant = get("/actuator/prometheus", TENANT_A);
    HttpResponse<String> operator = get("/actuator/prometheus", ProviderFailuresIT.ADMIN);

    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(anonymous.body()).contains("AUTHENTICATION_REQUIRED").doesNotContain("idempotency_");
    assertThat(tenant.statusCode()).isEqualTo(403);
    assertThat(tenant.body()).doesNotContain("idempotency_");
    // A key nobody issued is no identity at all: 401 with the challenge, as on the tenant API.
    for (String path : List.of("/actuator/prometheus", "/v1/admin/idempotency/recovery")) {
      HttpResponse<String> unknownKey = get(path, "sk_nobody_issued_this");
      assertThat(unknownKey.statusCode()).as(path).isEqualTo(401);
      assertThat(unknownKey.headers().firstValue("WWW-Authenticate")).as(path).hasValue("Bearer");
      assertThat(unknownKey.body()).contains("AUTHENTICATION_REQUIRED").doesNotContain("records");
    }
    assertThat(operator.statusCode()).isEqualTo(200);
    assertThat(operator.body()).contains("idempotency_");
    assertThat(open("/actuator").statusCode()).isEqualTo(401);
    assertThat(open("/actuator/health/liveness").statusCode()).isEqualTo(200);
    assertThat(open("/actuator/health/readiness").statusCode()).isEqualTo(200);
    assertThat(open("/v3/api-docs").statusCode()).isEqualTo(200);
  }
}
