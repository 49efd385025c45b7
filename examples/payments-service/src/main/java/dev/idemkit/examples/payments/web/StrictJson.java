package dev.idemkit.examples.payments.web;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.core.StreamReadFeature;

/**
 * A body that names the same field twice is refused (400 {@code DUPLICATE_FIELD}) instead of
 * keeping the last value: {@code {"amount":"10.00", …, "amount":"99.00"}} must not charge 99.00 to
 * a reader who saw 10.00 first. Spring Boot has no property for this stream-level feature of
 * Jackson 3, so it is set on the mapper's builder.
 */
@Configuration(proxyBeanMethods = false)
class StrictJson {

  @Bean
  JsonMapperBuilderCustomizer strictDuplicateDetection() {
    return builder -> builder.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
  }
}
