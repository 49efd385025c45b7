package dev.idemkit.examples.payments.web;

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
                        + " key>. Endpoints marked idempotent take an Idempotency-Key header."));
  }

  @Bean
  OperationCustomizer idempotencyContract(
      @Value("${idemkit.default-ttl:PT24H}") Duration defaultTtl) {
    return (operation, handler) -> {
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
      ApiResponses responses =
          operation.getResponses() == null ? new ApiResponses() : operation.getResponses();
      responses.addApiResponse(
          "400",
          problem(
              "IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_NOT_ISSUED or"
                  + " VALIDATION_FAILED; nothing was stored"));
      responses.addApiResponse(
          "409",
          problem(
                  "IDEMPOTENCY_REQUEST_IN_PROGRESS or IDEMPOTENCY_OUTCOME_PENDING: retry with the"
                      + " same key after Retry-After seconds")
              .addHeaderObject(
                  "Retry-After", new Header().schema(new StringSchema()).description("seconds")));
      responses.addApiResponse(
          "422", problem("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST: never a silent replay"));
      operation.setResponses(responses);
      return operation;
    };
  }

  private static ApiResponse problem(String description) {
    return new ApiResponse().description("application/problem+json: " + description);
  }
}
