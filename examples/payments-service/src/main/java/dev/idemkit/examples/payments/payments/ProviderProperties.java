package dev.idemkit.examples.payments.payments;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code payments.provider.*}: the downstream payment provider.
 *
 * @param url the provider's base URL; empty: start the simulator in-process (demo mode)
 * @param timeout how long a charge may take before its outcome counts as unknown
 * @param embeddedPort the in-process simulator's port (0: any free port; unset: the service's port
 *     + 1, or any free port if that one is taken)
 * @param faults the in-process simulator's random faults, e.g. {@code drop-after-charge:0.1}
 * @param latency the in-process simulator's delay under its {@code latency} fault (300 ms)
 */
@ConfigurationProperties("payments.provider")
public record ProviderProperties(
    String url, Duration timeout, Integer embeddedPort, String faults, Duration latency) {

  public ProviderProperties {
    timeout = timeout == null ? Duration.ofSeconds(2) : timeout;
    latency = latency == null ? Duration.ofMillis(300) : latency;
    embeddedPort = embeddedPort == null ? -1 : embeddedPort;
  }
}
