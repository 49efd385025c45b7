package dev.idemkit.examples.payments;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code payments.*}.
 *
 * @param apiKeys API key to tenant ({@code Authorization: Bearer <key>}); none by default: while it
 *     is empty the demo tenants' keys are accepted ({@code payments.demo.api-keys.*}, see {@code
 *     web.ApiKeys})
 * @param adminApiKeys API keys of operators, who may use {@code /v1/admin/**} (and nothing else);
 *     while it is empty the demo operator's key is accepted ({@code
 *     payments.demo.admin-api-keys.*})
 * @param rateLimitPerSecond requests a tenant may make per second; 0 turns the limit off
 * @param maxBodyBytes the largest request body accepted (413 above it)
 * @param provider the downstream payment provider
 */
@ConfigurationProperties("payments")
public record PaymentsProperties(
    Map<String, String> apiKeys,
    Map<String, String> adminApiKeys,
    int rateLimitPerSecond,
    int maxBodyBytes,
    Provider provider) {

  public PaymentsProperties {
    apiKeys = apiKeys == null ? new LinkedHashMap<>() : apiKeys;
    adminApiKeys = adminApiKeys == null ? new LinkedHashMap<>() : adminApiKeys;
    maxBodyBytes = maxBodyBytes <= 0 ? 16 * 1024 : maxBodyBytes;
    provider = provider == null ? new Provider(null, null, null, null, null) : provider;
  }

  /**
   * @param url the provider's base URL; empty: start the simulator in-process (demo mode)
   * @param timeout how long a charge may take before its outcome counts as unknown
   * @param embeddedPort the in-process simulator's port (0: any free port; unset: the service's
   *     port + 1, or any free port if that one is taken)
   * @param faults the in-process simulator's random faults, e.g. {@code drop-after-charge:0.1}
   * @param latency the in-process simulator's delay under its {@code latency} fault (300 ms)
   */
  public record Provider(
      String url, Duration timeout, Integer embeddedPort, String faults, Duration latency) {
    public Provider {
      timeout = timeout == null ? Duration.ofSeconds(2) : timeout;
      latency = latency == null ? Duration.ofMillis(300) : latency;
      embeddedPort = embeddedPort == null ? -1 : embeddedPort;
    }

    public boolean embedded() {
      return url == null || url.isBlank();
    }
  }
}
