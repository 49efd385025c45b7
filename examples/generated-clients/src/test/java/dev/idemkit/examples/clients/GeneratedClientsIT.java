package dev.idemkit.examples.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.idemkit.client.PaymentsServiceProcess;
import dev.idemkit.examples.clients.java.ApiClient;
import dev.idemkit.examples.clients.java.ApiException;
import dev.idemkit.examples.clients.java.ApiResponse;
import dev.idemkit.examples.clients.java.api.PaymentsApi;
import dev.idemkit.examples.clients.java.model.CreatePaymentRequest;
import dev.idemkit.examples.clients.java.model.ErrorCode;
import dev.idemkit.examples.clients.java.model.PaymentResponse;
import dev.idemkit.examples.clients.java.model.Problem;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The clients generated from {@code src/main/openapi/payments-api.json} against the running
 * service: the document is the one the service serves, and each client runs the tour (create,
 * replay with the marker visible, the same key for another amount as a typed problem, read back).
 */
class GeneratedClientsIT {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static PaymentsServiceProcess service;

  @BeforeAll
  static void start() throws Exception {
    service = PaymentsServiceProcess.start();
  }

  @AfterAll
  static void stop() {
    if (service != null) {
      service.close();
    }
  }

  /**
   * The clients are generated from the checked-in document, so it must be what the service serves
   * at {@code /v3/api-docs} (without {@code servers}, which names the port it answered on). When
   * the service's API changes, this test writes the new document to {@code target/} and says where
   * to copy it.
   */
  @Test
  void theDocumentIsTheOneTheServiceServes() throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(service.uri().resolve("/v3/api-docs")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    ObjectNode live = (ObjectNode) JSON.readTree(response.body());
    live.remove("servers");
    Path checkedIn = Path.of(System.getProperty("generated-clients.document"));
    if (!live.equals(JSON.readTree(checkedIn.toFile()))) {
      Path fresh = Path.of("target", "payments-api.json");
      Files.writeString(
          fresh, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(live) + "\n");
      throw new AssertionError(
          "The service's /v3/api-docs differs from "
              + checkedIn
              + ". If the change is meant, copy "
              + fresh.toAbsolutePath()
              + " over it and build again, so the clients are generated from it.");
    }
  }

  @Test
  void theJavaClientRunsTheTour() throws Exception {
    ApiClient client = new ApiClient();
    client.updateBaseUri(service.uri().toString());
    // The native library has no authentication of its own: its request hook adds the header.
    client.setRequestInterceptor(
        request -> request.header("Authorization", "Bearer " + PaymentsServiceProcess.API_KEY));
    PaymentsApi payments = new PaymentsApi(client);
    String key = UUID.randomUUID().toString();
    CreatePaymentRequest command =
        new CreatePaymentRequest()
            .accountId("acc_1")
            .amount("10.00")
            .currency("EUR")
            .merchantReference("java-client-" + key);

    ApiResponse<PaymentResponse> created = payments.createPaymentWithHttpInfo(key, command);
    assertThat(created.getStatusCode()).isEqualTo(201);
    assertThat(created.getHeaders()).doesNotContainKey("idempotent-replayed");

    ApiResponse<PaymentResponse> replay = payments.createPaymentWithHttpInfo(key, command);
    assertThat(replay.getStatusCode()).isEqualTo(201);
    assertThat(replay.getHeaders()).containsEntry("idempotent-replayed", List.of("true"));
    assertThat(replay.getData().getPaymentId()).isEqualTo(created.getData().getPaymentId());

    ApiException refused =
        catchThrowableOfType(
            ApiException.class,
            () ->
                payments.createPayment(
                    key,
                    new CreatePaymentRequest()
                        .accountId("acc_1")
                        .amount("99.00")
                        .currency("EUR")
                        .merchantReference(command.getMerchantReference())));
    assertThat(refused.getCode()).isEqualTo(422);
    Problem problem = client.getObjectMapper().readValue(refused.getResponseBody(), Problem.class);
    assertThat(problem.getErrorCode())
        .isEqualTo(ErrorCode.IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST);

    PaymentResponse fetched = payments.getPayment(created.getData().getPaymentId());
    assertThat(fetched.getStatus()).isEqualTo(PaymentResponse.StatusEnum.COMPLETED);
    assertThat(service.payments(command.getMerchantReference())).isEqualTo(1);
  }

  @Test
  void theTypeScriptClientRunsTheTour() throws Exception {
    Path tour = Path.of(System.getProperty("generated-clients.typescript-tour"));
    assumeTrue(
        Files.exists(tour),
        "the TypeScript client was not built (no npm on this machine): its tour is skipped");
    String key = UUID.randomUUID().toString();
    String reference = "typescript-client-" + key;
    ProcessBuilder node =
        new ProcessBuilder("node", tour.toString()).redirectError(ProcessBuilder.Redirect.INHERIT);
    node.environment().put("BASE_URI", service.uri().toString());
    node.environment().put("API_KEY", PaymentsServiceProcess.API_KEY);
    node.environment().put("IDEMPOTENCY_KEY", key);
    node.environment().put("MERCHANT_REFERENCE", reference);
    Process process = node.start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(out).isZero();

    JsonNode seen = JSON.readTree(out);
    assertThat(seen.get("created.status").asInt()).isEqualTo(201);
    assertThat(seen.get("created.replayed").isNull()).isTrue();
    assertThat(seen.get("replay.status").asInt()).isEqualTo(201);
    assertThat(seen.get("replay.replayed").asText()).isEqualTo("true");
    assertThat(seen.get("replay.paymentId")).isEqualTo(seen.get("created.paymentId"));
    assertThat(seen.get("mismatch.status").asInt()).isEqualTo(422);
    assertThat(seen.get("mismatch.isKeyReused").asBoolean()).isTrue();
    assertThat(seen.get("get.paymentId")).isEqualTo(seen.get("created.paymentId"));
    assertThat(seen.get("get.isCompleted").asBoolean()).isTrue();
    assertThat(service.payments(reference)).isEqualTo(1);
  }
}
