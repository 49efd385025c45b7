package dev.idemkit.examples.payments.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertiesPropertySource;
import org.springframework.core.env.PropertySource;

/**
 * The embedded demo's secrets, and only the demo's. This repository is public, and so are the
 * demo's API keys, master key and HMAC key ({@code demo-secrets.properties}): anyone could call the
 * API as a tenant or as the operator with them, unwrap the tenants' data keys, or test guesses
 * against fingerprints.
 *
 * <p>On the embedded PostgreSQL ({@code idemkit.embedded.active}, a second instance that joined it
 * included), the demo's secrets are added below every other setting, so the README's examples work
 * and a key of the deployment's own still wins. Anywhere else the service refuses to start, in one
 * line naming the property at fault, while any demo secret is configured: a demo API key ({@code
 * payments.demo.api-keys.*}, {@code payments.demo.admin-api-keys.*}), the demo's master or HMAC key
 * (by value, whatever its id), or the embedded demo's issued-keys secret file.
 */
public class DemoSecrets implements EnvironmentPostProcessor, Ordered {

  static final String FILE = "demo-secrets.properties";
  private static final List<String> DEMO_KEYS =
      List.of("payments.demo.api-keys.", "payments.demo.admin-api-keys.");
  private static final String MASTER_KEYS = "idemkit.protection.encryption.master-keys.";
  private static final String HMAC_KEYS = "idemkit.protection.fingerprint.hmac-keys.";
  private static final String SECRET_FILE = "idemkit.issued-keys.secret-file";
  private static final String DEMO_SECRET_FILE = "idemkit-issued-keys.secret";

  @Override
  public int getOrder() {
    // After the embedded database is set up (EmbeddedPostgresEnvironmentPostProcessor).
    return Ordered.LOWEST_PRECEDENCE;
  }

  @Override
  public void postProcessEnvironment(
      ConfigurableEnvironment environment, SpringApplication application) {
    Properties demo = demoSecrets();
    if (environment.getProperty("idemkit.embedded.active", Boolean.class, false)) {
      environment.getPropertySources().addLast(new PropertiesPropertySource("demoSecrets", demo));
      return;
    }
    demoSecretIn(environment, demo)
        .ifPresent(
            refused -> {
              throw refused;
            });
  }

  /** What is wrong and what to do, if a demo secret is configured outside the demo. */
  static Optional<DemoSecretException> demoSecretIn(
      ConfigurableEnvironment environment, Properties demo) {
    for (String name : propertyNames(environment)) {
      String value = environment.getProperty(name);
      if (DEMO_KEYS.stream().anyMatch(name::startsWith) || isDemoKeyVariable(name)) {
        return Optional.of(
            new DemoSecretException(
                name
                    + " is a demo API key, public in this repository and accepted only by the"
                    + " embedded demo",
                "remove it and set payments.api-keys.<key>=<tenant> (and"
                    + " payments.admin-api-keys.<key>=<operator>) with keys of your own."));
      }
      if (name.startsWith(MASTER_KEYS) && isDemoValue(demo, MASTER_KEYS, value)) {
        return Optional.of(
            new DemoSecretException(
                name + " is the embedded demo's master key, public in this repository",
                "set idemkit.protection.encryption.master-keys.<id>=<base64 of 32 random bytes>"
                    + " and idemkit.protection.encryption.current-master-key=<id> of your own."));
      }
      if (name.startsWith(HMAC_KEYS) && isDemoValue(demo, HMAC_KEYS, value)) {
        return Optional.of(
            new DemoSecretException(
                name + " is the embedded demo's HMAC key, public in this repository",
                "set idemkit.protection.fingerprint.hmac-keys.<id>=<base64 of 32 random bytes>"
                    + " and idemkit.protection.fingerprint.current-hmac-key=<id> of your own."));
      }
    }
    String secretFile = environment.getProperty(SECRET_FILE, "");
    if (!secretFile.isBlank()
        && Path.of(secretFile.trim()).getFileName().toString().equals(DEMO_SECRET_FILE)) {
      return Optional.of(
          new DemoSecretException(
              SECRET_FILE
                  + " names the embedded demo's issued-keys secret ("
                  + secretFile.trim()
                  + ")",
              "set idemkit.issued-keys.secret to a random value of your own, the same on every"
                  + " instance (a second instance of the demo joins it with"
                  + " --idemkit.embedded.join=true)."));
    }
    return Optional.empty();
  }

  /**
   * A demo API key set as an environment variable ({@code PAYMENTS_DEMO_APIKEYS_<KEY>}, read as
   * {@code payments.demo.apikeys.<key>}).
   */
  private static boolean isDemoKeyVariable(String name) {
    return name.startsWith("payments.demo.apikeys.")
        || name.startsWith("payments.demo.adminapikeys.");
  }

  private static boolean isDemoValue(Properties demo, String prefix, String value) {
    return value != null
        && demo.stringPropertyNames().stream()
            .filter(name -> name.startsWith(prefix))
            .anyMatch(name -> demo.getProperty(name).trim().equals(value.trim()));
  }

  private static List<String> propertyNames(ConfigurableEnvironment environment) {
    List<String> names = new ArrayList<>();
    for (PropertySource<?> source : environment.getPropertySources()) {
      if (source instanceof EnumerablePropertySource<?> enumerable) {
        for (String name : enumerable.getPropertyNames()) {
          String relaxed = relaxed(name);
          if (!names.contains(relaxed)) {
            names.add(relaxed);
          }
        }
      }
    }
    return names;
  }

  /**
   * An environment variable's name in the form the properties use ({@code PAYMENTS_DEMO_APIKEYS_X}
   * → {@code payments.demo.apikeys.x}), so that a demo secret set that way is found as well.
   */
  private static String relaxed(String name) {
    return name.chars().allMatch(c -> c == '_' || Character.isUpperCase(c) || Character.isDigit(c))
        ? name.toLowerCase(java.util.Locale.ROOT).replace('_', '.')
        : name;
  }

  static Properties demoSecrets() {
    Properties demo = new Properties();
    try (InputStream in = DemoSecrets.class.getClassLoader().getResourceAsStream(FILE)) {
      if (in == null) {
        throw new IllegalStateException(FILE + " is missing from the class path");
      }
      demo.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return demo;
  }

  /** A demo secret configured outside the embedded demo: what is wrong, and what to do. */
  public static final class DemoSecretException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String reason;
    private final String action;

    DemoSecretException(String reason, String action) {
      super("Refusing to start outside the embedded demo: " + reason + ": " + action);
      this.reason = reason;
      this.action = action;
    }

    /** Which property holds which demo secret, one sentence. */
    public String reason() {
      return "Refusing to start outside the embedded demo: " + reason + ".";
    }

    /** What to set instead, one sentence. */
    public String action() {
      return Character.toUpperCase(action.charAt(0)) + action.substring(1);
    }
  }
}
