package dev.idemkit.spring.boot;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.time.Duration;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * A handler method's {@link Idempotent} (null when it has none), its {@link ResponseStatus}, the
 * position of its {@link RequestBody} parameter (-1: none) and its own window (null: the default).
 * Spring's merged-annotation lookup and the parameters' annotations cost a search and copies on
 * every call, and a method's annotations do not change.
 */
record IdempotentHandler(
    Idempotent idempotent, ResponseStatus responseStatus, int bodyIndex, Duration ttl) {

  static IdempotentHandler of(Method method) {
    Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
    int bodyIndex = -1;
    Annotation[][] annotations = method.getParameterAnnotations();
    for (int i = 0; i < annotations.length && bodyIndex < 0; i++) {
      for (Annotation a : annotations[i]) {
        if (a instanceof RequestBody) {
          bodyIndex = i;
          break;
        }
      }
    }
    return new IdempotentHandler(
        idempotent,
        AnnotatedElementUtils.findMergedAnnotation(method, ResponseStatus.class),
        bodyIndex,
        idempotent == null || idempotent.ttl().isEmpty() ? null : Duration.parse(idempotent.ttl()));
  }

  Object requestBody(Object[] arguments) {
    return bodyIndex < 0 ? null : arguments[bodyIndex];
  }
}
