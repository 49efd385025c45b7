package dev.idemkit.spring.boot;

import dev.idemkit.PhasedOperation;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.MethodParameter;
import org.springframework.http.ResponseEntity;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.method.support.HandlerMethodReturnValueHandler;
import org.springframework.web.method.support.ModelAndViewContainer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * Answers for a {@code @Idempotent(phased = true)} handler, which returns the {@link
 * PhasedOperation} to run rather than an HTTP answer. {@link IdempotentMethodInterceptor} runs the
 * operation through the engine and leaves the answer (the outcome's, or the one refusing the
 * request) in the request; this writes it exactly as Spring MVC writes a {@code ResponseEntity}. It
 * comes first among the adapter's handlers, before the {@code @ResponseBody} processor that would
 * otherwise serialize the operation itself.
 */
final class PhasedOperationReturnValueHandler implements HandlerMethodReturnValueHandler {

  private static final String ANSWER =
      PhasedOperationReturnValueHandler.class.getName() + ".answer";

  /** The type of what is written: the interceptor's answer. */
  private static final MethodParameter ANSWER_TYPE =
      new MethodParameter(
          ClassUtils.getMethod(PhasedOperationReturnValueHandler.class, "answerType"), -1);

  private final HandlerMethodReturnValueHandler entities;

  /**
   * @param entities the handler that writes a {@code ResponseEntity}
   */
  private PhasedOperationReturnValueHandler(HandlerMethodReturnValueHandler entities) {
    this.entities = entities;
  }

  /** Puts this handler first among the adapter's return value handlers. */
  static void registerFirst(RequestMappingHandlerAdapter adapter) {
    List<HandlerMethodReturnValueHandler> handlers =
        new ArrayList<>(adapter.getReturnValueHandlers());
    HandlerMethodReturnValueHandler entities =
        handlers.stream()
            .filter(h -> h.supportsReturnType(ANSWER_TYPE))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("No handler writes a ResponseEntity"));
    handlers.add(0, new PhasedOperationReturnValueHandler(entities));
    adapter.setReturnValueHandlers(handlers);
  }

  /** Leaves the answer to a phased handler's request for {@link #handleReturnValue}. */
  static void answer(HttpServletRequest request, ResponseEntity<byte[]> answer) {
    request.setAttribute(ANSWER, answer);
  }

  @Override
  public boolean supportsReturnType(MethodParameter returnType) {
    return PhasedOperation.class.isAssignableFrom(returnType.getParameterType());
  }

  @Override
  public void handleReturnValue(
      Object returnValue,
      MethodParameter returnType,
      ModelAndViewContainer mavContainer,
      NativeWebRequest webRequest)
      throws Exception {
    Object answer = webRequest.getAttribute(ANSWER, RequestAttributes.SCOPE_REQUEST);
    if (answer == null) {
      throw new IllegalStateException(
          "@Idempotent(phased = true) handler "
              + returnType.getMethod()
              + " answered a request the idempotency layer did not handle (a safe method, or no"
              + " Idempotency-Key where the key is optional): a phased operation runs only under"
              + " a key");
    }
    entities.handleReturnValue(answer, ANSWER_TYPE, mavContainer, webRequest);
  }

  /** Declares {@link #ANSWER_TYPE}; never called. */
  public static ResponseEntity<byte[]> answerType() {
    throw new UnsupportedOperationException();
  }
}
