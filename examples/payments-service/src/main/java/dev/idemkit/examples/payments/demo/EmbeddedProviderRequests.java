package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.payments.ProviderRequests;
import java.net.http.HttpRequest;
import java.util.Optional;

/**
 * Demo mode: the payments' provider requests go to the in-process simulator, and a charge sent
 * while serving a request that asked for a fault ({@link ProviderFaultHeaderFilter}) carries it.
 * Only the thread serving that request sees its fault: a payment the recovery worker resumes is
 * charged without one. With a real provider ({@code payments.provider.url} set) it does not exist.
 */
public class EmbeddedProviderRequests implements ProviderRequests {

  private final String baseUrl;

  /** Requests to the simulator at {@code baseUrl} ({@link EmbeddedProvider#baseUrl()}). */
  public EmbeddedProviderRequests(String baseUrl) {
    this.baseUrl = baseUrl;
  }

  @Override
  public Optional<String> baseUrl() {
    return Optional.of(baseUrl);
  }

  @Override
  public void decorateCharge(HttpRequest.Builder charge) {
    ProviderFaultHeaderFilter.requestedFault()
        .ifPresent(fault -> charge.header(ProviderFaultHeaderFilter.HEADER, fault));
  }
}
