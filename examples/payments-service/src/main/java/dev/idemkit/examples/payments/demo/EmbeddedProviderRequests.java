package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.payments.ProviderRequests;
import java.net.http.HttpRequest;
import java.util.Optional;
import org.springframework.stereotype.Component;

/**
 * Demo mode: the payments' provider requests go to the in-process simulator, and a charge sent
 * while serving a request that asked for a fault ({@link ProviderFaultHeaderFilter}) carries it.
 * Only the thread serving that request sees its fault: a payment the recovery worker resumes is
 * charged without one. With a real provider ({@code payments.provider.url} set) this adds nothing.
 */
@Component
public class EmbeddedProviderRequests implements ProviderRequests {

  private final EmbeddedProvider embedded;

  public EmbeddedProviderRequests(EmbeddedProvider embedded) {
    this.embedded = embedded;
  }

  @Override
  public Optional<String> baseUrl() {
    return Optional.ofNullable(embedded.baseUrl());
  }

  @Override
  public void decorateCharge(HttpRequest.Builder charge) {
    ProviderFaultHeaderFilter.requestedFault()
        .ifPresent(fault -> charge.header(ProviderFaultHeaderFilter.HEADER, fault));
  }
}
