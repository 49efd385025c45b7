package dev.idemkit.examples.payments.web;

import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The demo API keys ({@code payments.demo.api-keys.*}, {@code payments.demo.admin-api-keys.*}),
 * which only the embedded demo configures ({@code demo.DemoSecrets}), for the README's examples.
 * The gate accepts them only for a map the deployment leaves empty ({@link ApiKeys}).
 *
 * @param apiKeys demo API key to tenant
 * @param adminApiKeys demo admin API key to operator
 */
@ConfigurationProperties("payments.demo")
public record DemoApiKeys(Map<String, String> apiKeys, Map<String, String> adminApiKeys) {

  public DemoApiKeys {
    apiKeys = apiKeys == null ? Map.of() : Map.copyOf(apiKeys);
    adminApiKeys = adminApiKeys == null ? Map.of() : Map.copyOf(adminApiKeys);
  }
}
