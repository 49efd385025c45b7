package dev.idemkit.examples.payments;

import dev.idemkit.spring.boot.Idempotent;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.HeaderParameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import java.time.Duration;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The OpenAPI document ({@code /v3/api-docs}) states, per idempotent endpoint, the header, the
 * answers it can give and the expiry window: that window is part of the published contract.
 */
@Configuration
public class OpenApiConfig {

  @Bean
  OpenAPI paymentsApi() {
    return new OpenAPI()
        .info(
            new Info()
                .title("Idemkit payments service")
                .version("1")
                .description(
                    "A mini shop made safe to retry. Authenticate with Authorization: Bearer <API"
                        + " key>. Endpoints marked idempotent take an Idempotency-Key header."
                        + " Paths are accepted in their plain form only: ';' parameters, '.',"
                        + " '..' or empty segments, a trailing '/', and percent-encoded '/', '\\',"
                        + " '%' or unreserved characters get 400 MALFORMED_PATH. Management"
                        + " endpoints other than health take an operator's admin API key."));
  }

  @Bean
  OperationCustomizer idempotencyContract(
      @Value("${idemkit.default-ttl:PT24H}") Duration defaultTtl) {
    return (operation, handler) -> {
      ApiResponses answers =
          operation.getResponses() == null ? new ApiResponses() : operation.getResponses();
      operation.setResponses(answers);
      answer(
          answers,
          "400",
          ApiGateFilter.MALFORMED_PATH
              + " when the path is not in its plain form: no ';' parameters, no '.', '..' or"
              + " empty segments, no trailing '/', no percent-encoded '/', '\\', '%' or"
              + " unreserved characters (letters, digits, '-._~')");
      Idempotent idempotent = handler.getMethodAnnotation(Idempotent.class);
      if (idempotent == null) {
        return operation;
      }
      Duration ttl = idempotent.ttl().isEmpty() ? defaultTtl : Duration.parse(idempotent.ttl());
      String window = ttl.toHours() + " hours";
      operation.addParametersItem(
          new HeaderParameter()
              .name("Idempotency-Key")
              .required(idempotent.required())
              .schema(new StringSchema().minLength(1).maxLength(255))
              .description(
                  "One random key (a UUID) per intended operation, the same on every retry."
                      + " Scoped to your account and this operation ("
                      + idempotent.operation()
                      + "). Remembered for "
                      + window
                      + "."));
      operation.description(
          (operation.getDescription() == null ? "" : operation.getDescription() + "\n\n")
              + "Idempotent (operation "
              + idempotent.operation()
              + "): a retry with the same key and the same request gets the first answer"
              + " replayed, with Idempotent-Replayed: true, for "
              + window
              + " (expiry window "
              + ttl
              + "). After the window the key starts a new operation.");
      answer(
          answers,
          "400",
          "IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_NOT_ISSUED or"
              + " VALIDATION_FAILED; nothing was stored");
      answer(
              answers,
              "409",
              "IDEMPOTENCY_REQUEST_IN_PROGRESS or IDEMPOTENCY_OUTCOME_PENDING: retry with the"
                  + " same key after Retry-After seconds")
          .addHeaderObject(
              "Retry-After", new Header().schema(new StringSchema()).description("seconds"));
      answer(
          answers, "422", "IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST: never a silent replay");
      answer(
              answers,
              "503",
              "IDEMPOTENCY_STORE_UNAVAILABLE (the database cannot be reached) or"
                  + " OPERATION_INTERRUPTED: retry with the same key after Retry-After"
                  + " seconds; nothing happens twice")
          .addHeaderObject(
              "Retry-After", new Header().schema(new StringSchema()).description("seconds"));
      return operation;
    };
  }

  /** Adds {@code description} to the answer {@code status}, after what it already says. */
  private static ApiResponse answer(ApiResponses answers, String status, String description) {
    ApiResponse existing = answers.get(status);
    if (existing == null) {
      ApiResponse created = problem(description);
      answers.addApiResponse(status, created);
      return created;
    }
    String before = existing.getDescription();
    existing.setDescription(
        before == null || before.isBlank() ? description : before + "; " + description);
    return existing;
  }

  private static ApiResponse problem(String description) {
    return new ApiResponse().description("application/problem+json: " + description);
  }
}
