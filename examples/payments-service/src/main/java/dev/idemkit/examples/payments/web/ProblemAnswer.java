package dev.idemkit.examples.payments.web;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A business refusal a handler can answer, as an {@code application/problem+json} body with one of
 * {@link #errorCodes()}. {@link ApiDocumentation} puts it in the OpenAPI document; the answers
 * every endpoint shares (authentication, bad bodies, the idempotency layer's) are added there and
 * need no annotation. It may stand on an annotation that gathers the answers several handlers
 * share.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(ProblemAnswer.List.class)
public @interface ProblemAnswer {

  /** The HTTP status. */
  int status();

  /** The {@code errorCode} values this status can carry here. */
  String[] errorCodes();

  /** Several answers on one handler. */
  @Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
  @Retention(RetentionPolicy.RUNTIME)
  @Documented
  @interface List {
    ProblemAnswer[] value();
  }
}
