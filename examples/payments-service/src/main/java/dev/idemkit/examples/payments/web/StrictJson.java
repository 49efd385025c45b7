package dev.idemkit.examples.payments.web;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;

/**
 * The body is read as the document types it, nothing more lenient:
 *
 * <ul>
 *   <li>A body that names the same field twice is refused (400 {@code DUPLICATE_FIELD}) instead of
 *       keeping the last value: {@code {"amount":"10.00", …, "amount":"99.00"}} must not charge
 *       99.00 to a reader who saw 10.00 first. Spring Boot has no property for this stream-level
 *       feature of Jackson 3, so it is set on the mapper's builder.
 *   <li>A number or a boolean where the document declares a string is 400 {@code WRONG_TYPE}
 *       ({@code "amount": 10.00} would otherwise become {@code "10.0"} and {@code
 *       "merchantReference": true} the reference {@code "true"}), and so is a string where it
 *       declares a number or a boolean ({@code "quantity": "2"}): Jackson coerces both by default.
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
class StrictJson {

  @Bean
  JsonMapperBuilderCustomizer strictDuplicateDetection() {
    return builder -> builder.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
  }

  @Bean
  JsonMapperBuilderCustomizer noScalarCoercion() {
    return builder ->
        builder
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .withCoercionConfig(
                LogicalType.Textual,
                config ->
                    config
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
  }
}
