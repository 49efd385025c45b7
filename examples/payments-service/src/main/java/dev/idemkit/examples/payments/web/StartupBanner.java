package dev.idemkit.examples.payments.web;

import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Says where the service listens, which database it uses and the demo API keys it accepts. A
 * deployment's own keys are secrets: they are counted, never printed.
 */
@Component
public class StartupBanner {

  private static final Logger log = LoggerFactory.getLogger(StartupBanner.class);

  private final Environment environment;
  private final ApiKeys apiKeys;

  public StartupBanner(Environment environment, ApiKeys apiKeys) {
    this.environment = environment;
    this.apiKeys = apiKeys;
  }

  @EventListener(ApplicationReadyEvent.class)
  public void ready() {
    String port = environment.getProperty("local.server.port", "8080");
    String database =
        environment.getProperty(
            "idemkit.embedded.description", environment.getProperty("spring.datasource.url", "?"));
    StringBuilder keys = new StringBuilder();
    Set<String> demo = apiKeys.demoKeysInUse();
    apiKeys
        .tenantKeys()
        .forEach(
            (key, tenant) -> {
              if (demo.contains(key)) {
                keys.append("\n    ").append(key).append("  -> tenant ").append(tenant);
              }
            });
    apiKeys
        .operatorKeys()
        .forEach(
            (key, who) -> {
              if (demo.contains(key)) {
                keys.append("\n    ")
                    .append(key)
                    .append("  -> operator: /v1/admin and /actuator (metrics)");
              }
            });
    long own =
        Stream.concat(
                apiKeys.tenantKeys().keySet().stream(), apiKeys.operatorKeys().keySet().stream())
            .filter(key -> !demo.contains(key))
            .count();
    if (own > 0) {
      keys.append("\n    ").append(own).append(" key(s) of this deployment (not printed)");
    }
    // Health and metrics move to management.server.port when it is set apart from the API's; the
    // API gate does not run there, so no key is asked for.
    String managementPort = environment.getProperty("local.management.port", port);
    boolean apart = !managementPort.equals(port);
    String actuator =
        (apart ? "http://localhost:" + managementPort : "")
            + environment.getProperty("management.endpoints.web.base-path", "/actuator");
    log.info(
        "\n  Payments service ready on http://localhost:{}\n  Database: {}\n  API keys (Authorization:"
            + " Bearer <key>):{}\n  OpenAPI: http://localhost:{}/v3/api-docs   health:"
            + " {}/health   metrics: {}/prometheus{}",
        port,
        database,
        keys,
        port,
        actuator,
        actuator,
        apart ? " (management port)" : " (operator key)");
  }
}
