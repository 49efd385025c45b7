package dev.idemkit.examples.payments.web;

import java.util.List;
import java.util.Map;
import org.springframework.web.method.HandlerMethod;

/**
 * Problem answers that a servlet filter gives before any handler runs, for the API document ({@link
 * ApiDocumentation}): a filter outside the web package (the demo's, for one) documents its own
 * refusals here instead of in the handlers' annotations. Such an answer is never stored by the
 * idempotency layer, so it is not documented as replayed.
 */
public interface FilterAnswers {

  /** The error codes this filter can answer {@code handler}'s operation with, by status. */
  Map<Integer, List<String>> answers(HandlerMethod handler);
}
