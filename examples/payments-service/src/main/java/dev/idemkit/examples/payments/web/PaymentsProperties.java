package dev.idemkit.examples.payments.web;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The API's settings under {@code payments.*}: who may call it, how often, how much.
 *
 * @param apiKeys API key to tenant ({@code Authorization: Bearer <key>}); none by default: while it
 *     is empty the demo tenants' keys are accepted ({@code payments.demo.api-keys.*}, see {@link
 *     ApiKeys})
 * @param adminApiKeys API keys of operators, who may use {@code /v1/admin/**} (and nothing else);
 *     while it is empty the demo operator's key is accepted ({@code
 *     payments.demo.admin-api-keys.*})
 * @param rateLimitPerSecond requests a tenant may make per second; 0 turns the limit off
 * @param maxBodyBytes the largest request body accepted (413 above it)
 */
@ConfigurationProperties("payments")
public record PaymentsProperties(
    Map<String, String> apiKeys,
    Map<String, String> adminApiKeys,
    int rateLimitPerSecond,
    int maxBodyBytes) {

  public PaymentsProperties {
    apiKeys = apiKeys == null ? new LinkedHashMap<>() : apiKeys;
    adminApiKeys = adminApiKeys == null ? new LinkedHashMap<>() : adminApiKeys;
    maxBodyBytes = maxBodyBytes <= 0 ? 16 * 1024 : maxBodyBytes;
  }
}
