package dev.idemkit.examples.payments.web;

import dev.idemkit.spring.boot.IssuedKeys;
import dev.idemkit.spring.boot.TenantShards;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.tags.Tag;
import java.time.Duration;
import java.util.List;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The OpenAPI document ({@code /v3/api-docs}): what a client generator needs to produce a client
 * that works (see {@link ApiDocumentation}), including, per idempotent endpoint, the header and the
 * expiry window, which are part of the published contract.
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
                        + " key>. Endpoints marked idempotent take an Idempotency-Key header: one"
                        + " random key per intended operation, sent again on every retry of it;"
                        + " the retry gets the first answer, marked Idempotent-Replayed: true."
                        + " Every error is application/problem+json with a stable errorCode."
                        + " Paths are accepted in their plain form only: ';' parameters, '.',"
                        + " '..' or empty segments, a trailing '/', and percent-encoded '/', '\\',"
                        + " '%' or unreserved characters get 400 MALFORMED_PATH. Text with a"
                        + " control character or bytes that are not UTF-8 (in a reference also an"
                        + " invisible or bidirectional-control character) is a 400 that names the"
                        + " field or parameter, the character and its position; references are"
                        + " compared in Unicode NFC. Management endpoints other than health take"
                        + " an operator's admin API key."))
        .components(ApiDocumentation.components())
        .addSecurityItem(new SecurityRequirement().addList(ApiDocumentation.BEARER))
        .addTagsItem(new Tag().name("payments").description("Payments, charged once"))
        .addTagsItem(new Tag().name("orders").description("The mini shop's orders"))
        .addTagsItem(
            new Tag()
                .name("idempotency-keys")
                .description("Server-issued idempotency keys (optional; strict per operation)"))
        .addTagsItem(new Tag().name("admin").description("For operators, with an admin key"));
  }

  @Bean
  OperationCustomizer problemAnswers(
      @Value("${idemkit.default-ttl:PT24H}") Duration defaultTtl,
      @Value("${idemkit.mismatch-status:422}") int mismatchStatus,
      IssuedKeys issuedKeys,
      List<FilterAnswers> filters,
      ObjectProvider<TenantShards> shards) {
    return ApiDocumentation.answers(
        defaultTtl, mismatchStatus, issuedKeys, filters, shards.getIfAvailable());
  }

  @Bean
  OpenApiCustomizer portablePatterns() {
    return ApiDocumentation.portablePatterns();
  }

  /** Runs after {@link #portablePatterns()}: it sets the patterns that one dropped. */
  @Bean
  @org.springframework.core.annotation.Order(org.springframework.core.Ordered.LOWEST_PRECEDENCE)
  OpenApiCustomizer documentedRules() {
    return DocumentedRules.customizer();
  }
}
