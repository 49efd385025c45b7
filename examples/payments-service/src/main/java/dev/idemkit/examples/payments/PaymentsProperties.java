package dev.idemkit.examples.payments;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code payments.*}.
 *
 * @param apiKeys API key to tenant ({@code Authorization: Bearer <key>}); the defaults are the two
 *     demo tenants, for the embedded demo only: real deployments configure their own
 * @param rateLimitPerSecond requests a tenant may make per second; 0 turns the limit off
 * @param maxBodyBytes the largest request body accepted (413 above it)
 */
@ConfigurationProperties("payments")
public record PaymentsProperties(
    Map<String, String> apiKeys, int rateLimitPerSecond, int maxBodyBytes) {

  public PaymentsProperties {
    apiKeys = apiKeys == null ? new LinkedHashMap<>() : apiKeys;
    maxBodyBytes = maxBodyBytes <= 0 ? 16 * 1024 : maxBodyBytes;
  }
}
