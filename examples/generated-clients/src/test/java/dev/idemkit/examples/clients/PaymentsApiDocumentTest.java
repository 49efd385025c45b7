package dev.idemkit.examples.clients;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a generator needs from the document the clients are generated from (the service's own,
 * GeneratedClientsIT proves): enums where the service answers with a fixed set of values, one
 * problem schema on every error answer, the bearer scheme on every operation, and the replay marker
 * on the answers a retry can get.
 */
class PaymentsApiDocumentTest {

  private static JsonNode document;

  @BeforeAll
  static void read() throws IOException {
    document = new ObjectMapper().readTree(Path.of("src/main/openapi/payments-api.json").toFile());
  }

  @Test
  void statusesAreEnums() {
    Map<String, List<String>> expected =
        Map.of(
            "PaymentResponse/status",
            List.of(
                "LOCAL_PAYMENT_CREATED",
                "PROVIDER_REQUEST_SENT",
                "COMPLETED",
                "DECLINED",
                "FAILED"),
            "OrderResponse/status",
            List.of("PENDING_PAYMENT", "PAID"),
            "PaidResponse/status",
            List.of("PAID"),
            "Shipment/status",
            List.of("REQUESTED"),
            "LedgerEntry/entryType",
            List.of("PAYMENT_DEBIT", "PAYMENT_CREDIT"));
    expected.forEach(
        (field, values) -> {
          String[] schemaAndProperty = field.split("/");
          JsonNode property =
              schema(schemaAndProperty[0]).at("/properties/" + schemaAndProperty[1]);
          assertThat(texts(property.get("enum"))).as(field).isEqualTo(values);
        });
  }

  /** Every errorCode an operation documents is a value of the one ErrorCode enum. */
  @Test
  void errorCodeIsAnEnumOfEveryDocumentedCode() {
    assertThat(schema("Problem").at("/properties/errorCode/$ref").asText())
        .isEqualTo("#/components/schemas/ErrorCode");
    List<String> codes = texts(schema("ErrorCode").get("enum"));
    assertThat(codes)
        .contains(
            "IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST",
            "PAYMENT_DECLINED",
            "VALIDATION_FAILED",
            "NOT_FOUND")
        .doesNotHaveDuplicates();
    forEachErrorAnswer(
        (where, answer) ->
            answer
                .at("/content/application~1problem+json/examples")
                .fieldNames()
                .forEachRemaining(code -> assertThat(codes).as(where).contains(code)));
  }

  @Test
  void everyErrorAnswerIsAProblem() {
    List<String> checked = new ArrayList<>();
    forEachErrorAnswer(
        (where, answer) -> {
          assertThat(fieldNames(answer.get("content")))
              .as(where)
              .containsExactly("application/problem+json");
          assertThat(answer.at("/content/application~1problem+json/schema/$ref").asText())
              .as(where)
              .isEqualTo("#/components/schemas/Problem");
          checked.add(where);
        });
    assertThat(checked).contains("post /v1/payments 422", "get /v1/payments/{paymentId} 404");
  }

  /** Applied to the whole document, so a generator adds Authorization to every operation. */
  @Test
  void theBearerSchemeIsApplied() {
    assertThat(document.at("/components/securitySchemes/bearer/type").asText()).isEqualTo("http");
    assertThat(document.at("/components/securitySchemes/bearer/scheme").asText())
        .isEqualTo("bearer");
    assertThat(document.at("/security/0").has("bearer")).isTrue();
    for (Operation operation : operations()) {
      assertThat(operation.node().has("security")).as(operation.toString()).isFalse();
    }
  }

  /** On the operations that replay, each answer a retry can get says whether it is a replay. */
  @Test
  void answersThatCanBeReplayedDocumentTheMarker() {
    List<String> idempotent = new ArrayList<>();
    for (Operation operation : operations()) {
      if (!operation.node().has("x-idempotency")) {
        continue;
      }
      idempotent.add(operation.node().get("operationId").asText());
      JsonNode answers = operation.node().get("responses");
      for (String status : fieldNames(answers)) {
        if (status.startsWith("2")) {
          assertThat(answers.at("/" + status + "/headers/Idempotent-Replayed/schema/enum"))
              .as(operation + " " + status)
              .hasSize(1);
        }
      }
    }
    assertThat(idempotent).contains("createPayment", "createOrder", "confirmOrderPayment");
    JsonNode create = document.at("/paths/~1v1~1payments/post/responses");
    assertThat(create.at("/402/headers").has("Idempotent-Replayed")).isTrue();
    assertThat(create.at("/409/headers").has("Retry-After")).isTrue();
  }

  private record Operation(String method, String path, JsonNode node) {
    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  private static List<Operation> operations() {
    List<Operation> operations = new ArrayList<>();
    JsonNode paths = document.get("paths");
    for (String path : fieldNames(paths)) {
      for (String method : fieldNames(paths.get(path))) {
        operations.add(new Operation(method, path, paths.get(path).get(method)));
      }
    }
    return operations;
  }

  /** Each 4xx, 5xx and default answer of each operation, named "method path status". */
  private static void forEachErrorAnswer(BiConsumer<String, JsonNode> check) {
    for (Operation operation : operations()) {
      JsonNode answers = operation.node().get("responses");
      for (String status : fieldNames(answers)) {
        if (status.startsWith("4") || status.startsWith("5") || status.equals("default")) {
          check.accept(operation + " " + status, answers.get(status));
        }
      }
    }
  }

  private static JsonNode schema(String name) {
    JsonNode schema = document.at("/components/schemas/" + name);
    assertThat(schema.isMissingNode()).as(name).isFalse();
    return schema;
  }

  private static List<String> fieldNames(JsonNode object) {
    List<String> names = new ArrayList<>();
    object.fieldNames().forEachRemaining(names::add);
    return names;
  }

  private static List<String> texts(JsonNode array) {
    List<String> texts = new ArrayList<>();
    array.forEach(value -> texts.add(value.asText()));
    return texts;
  }
}
