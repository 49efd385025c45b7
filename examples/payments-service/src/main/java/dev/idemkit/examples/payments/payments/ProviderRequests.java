package dev.idemkit.examples.payments.payments;

import java.net.http.HttpRequest;
import java.util.Optional;

/**
 * A deployment's say in what {@link ProviderClient} sends: where the provider is when {@code
 * payments.provider.url} does not say, and headers of its own on a charge request. Optional: with
 * no such bean the client sends what it builds to {@code payments.provider.url}.
 */
public interface ProviderRequests {

  /** The provider's base URL in place of {@code payments.provider.url}, or empty to keep that. */
  Optional<String> baseUrl();

  /**
   * Called on the thread that sends a charge, just before it is sent: for a payment's first request
   * that is the thread serving it, for a resumed one the thread resuming it.
   */
  void decorateCharge(HttpRequest.Builder charge);
}
