package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.web.ApiKeys;
import dev.idemkit.spi.KeyProvider;
import dev.idemkit.spring.boot.IdemkitProperties;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Outside the embedded demo, says at start-up when stored answers are sealed, or fingerprints
 * keyed, with a demo key this jar ships in its {@code application.properties}: anyone with the
 * source can read those answers, or test guesses against those fingerprints. Setting only a new
 * key, and not the current one, leaves the demo key in use; the warning names both settings. Says
 * as well which demo API keys the gate still accepts ({@link ApiKeys}: those of a map the
 * deployment left empty): anyone with the source can call the API with them, as a tenant or as the
 * operator.
 */
@Component
public class DemoKeysWarning {

  private static final Logger log = LoggerFactory.getLogger(DemoKeysWarning.class);

  private static final String MASTER_KEYS = "idemkit.protection.encryption.master-keys.";
  private static final String HMAC_KEYS = "idemkit.protection.fingerprint.hmac-keys.";

  private final Environment environment;
  private final IdemkitProperties properties;
  private final ObjectProvider<KeyProvider> keyProvider;
  private final ApiKeys apiKeys;

  public DemoKeysWarning(
      Environment environment,
      IdemkitProperties properties,
      ObjectProvider<KeyProvider> keyProvider,
      ApiKeys apiKeys) {
    this.environment = environment;
    this.properties = properties;
    this.keyProvider = keyProvider;
    this.apiKeys = apiKeys;
  }

  @EventListener(ApplicationReadyEvent.class)
  public void check() {
    if (environment.getProperty("idemkit.embedded.active", Boolean.class, false)) {
      return;
    }
    if (!apiKeys.demoKeysInUse().isEmpty()) {
      log.warn(
          "The API accepts the demo API key(s) {} that this service ships in its"
              + " application.properties: anyone with the source can call it with them (the demo"
              + " operator key opens every tenant's records). Outside the demo configure your own,"
              + " payments.api-keys.<key>=<tenant> and payments.admin-api-keys.<key>=<operator>"
              + " (e.g. in SPRING_APPLICATION_JSON): one key of your own in a map ends that map's"
              + " demo keys.",
          String.join(", ", apiKeys.demoKeysInUse()));
    }
    Properties shipped = shipped();
    IdemkitProperties.Encryption encryption = properties.getProtection().getEncryption();
    String master = encryption.getCurrentMasterKey();
    if (encryption.isEnabled()
        && keyProvider.getIfAvailable() == null
        && isShipped(shipped, MASTER_KEYS, encryption.getMasterKeys().get(master))) {
      log.warn(
          "Stored answers are encrypted with the demo master key {} that this service ships in its"
              + " application.properties: anyone with the source can unwrap the tenants' data keys."
              + " Outside the demo set your own,"
              + " IDEMKIT_PROTECTION_ENCRYPTION_MASTERKEYS_<ID>=<base64 of 32 random bytes> and"
              + " IDEMKIT_PROTECTION_ENCRYPTION_CURRENTMASTERKEY=<id> (or a KeyProvider bean);"
              + " keep {} configured until DataProtection.rewrapDataKeys(\"{}\") has run.",
          master,
          master,
          master);
    }
    IdemkitProperties.Fingerprints fingerprint = properties.getProtection().getFingerprint();
    String hmac = fingerprint.getCurrentHmacKey();
    if (!hmac.isEmpty() && isShipped(shipped, HMAC_KEYS, fingerprint.getHmacKeys().get(hmac))) {
      log.warn(
          "Fingerprints are keyed with the demo HMAC key {} that this service ships in its"
              + " application.properties: anyone with the source can test guesses of a command"
              + " against them. Outside the demo set your own,"
              + " IDEMKIT_PROTECTION_FINGERPRINT_HMACKEYS_<ID>=<base64 of 32 or more random bytes>"
              + " and IDEMKIT_PROTECTION_FINGERPRINT_CURRENTHMACKEY=<id>; keep {} configured for"
              + " one window (idemkit.default-ttl) so that retries of older records still compare.",
          hmac,
          hmac);
    }
  }

  private static boolean isShipped(Properties shipped, String prefix, String value) {
    if (value == null) {
      return false;
    }
    return shipped.stringPropertyNames().stream()
        .filter(name -> name.startsWith(prefix))
        .anyMatch(name -> shipped.getProperty(name).trim().equals(value.trim()));
  }

  /** The application.properties in this jar, as shipped. */
  private static Properties shipped() {
    Properties shipped = new Properties();
    try (InputStream in =
        DemoKeysWarning.class.getClassLoader().getResourceAsStream("application.properties")) {
      if (in != null) {
        shipped.load(in);
      }
    } catch (IOException e) {
      log.debug("Could not read the shipped application.properties", e);
    }
    return shipped;
  }
}
