package dev.idemkit.spi;

import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;

/**
 * Drops or masks what must not be stored before an answer is stored (a card security code, a full
 * card number). The first request's caller gets the full answer; every replay gets exactly the
 * redacted bytes that were stored. See {@link dev.idemkit.JsonFieldRedactor} for the common case.
 */
@FunctionalInterface
public interface ResponseRedactor {

  /** The answer as it may be stored. */
  StoredResponse redact(ScopedKey id, StoredResponse response);
}
