package dev.idemkit.examples.payments.web;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.stereotype.Component;

/**
 * The API keys the gate accepts, each map on its own: the deployment's tenant keys ({@code
 * payments.api-keys.*}) or, if it configures none, the demo ones ({@link DemoApiKeys}); the
 * deployment's operator keys ({@code payments.admin-api-keys.*}) or, if none, the demo operator
 * key.
 *
 * <p>The demo keys live under a prefix of their own because Spring merges map properties: shipped
 * under {@code payments.api-keys}, they would stay active beside every key a deployment adds, and
 * anyone with the source could use them (the demo operator key opens every tenant's records).
 */
@Component
public class ApiKeys {

  private final Map<String, String> tenants;
  private final Map<String, String> operators;
  private final boolean demoTenants;
  private final boolean demoOperators;

  public ApiKeys(PaymentsProperties properties, DemoApiKeys demo) {
    this.demoTenants = properties.apiKeys().isEmpty();
    this.demoOperators = properties.adminApiKeys().isEmpty();
    this.tenants = Map.copyOf(demoTenants ? demo.apiKeys() : properties.apiKeys());
    this.operators = Map.copyOf(demoOperators ? demo.adminApiKeys() : properties.adminApiKeys());
  }

  /** The tenant whose API key {@code key} is, or {@code null}. */
  public String tenant(String key) {
    return tenants.get(key);
  }

  /** The operator whose admin API key {@code key} is, or {@code null}. */
  public String operator(String key) {
    return operators.get(key);
  }

  /** Tenant API key to tenant, as accepted. */
  public Map<String, String> tenantKeys() {
    return tenants;
  }

  /** Admin API key to operator, as accepted. */
  public Map<String, String> operatorKeys() {
    return operators;
  }

  /** Whether {@code tenant} is a tenant of this service: an accepted API key names it. */
  public boolean isTenant(String tenant) {
    return tenants.containsValue(tenant);
  }

  /** The demo keys still accepted (none once the deployment configures keys of its own). */
  public Set<String> demoKeysInUse() {
    Set<String> inUse = new TreeSet<>();
    if (demoTenants) {
      inUse.addAll(tenants.keySet());
    }
    if (demoOperators) {
      inUse.addAll(operators.keySet());
    }
    return inUse;
  }
}
