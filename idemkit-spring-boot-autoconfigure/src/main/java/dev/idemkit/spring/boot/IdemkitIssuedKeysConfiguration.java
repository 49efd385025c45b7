package dev.idemkit.spring.boot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Issued idempotency keys ({@code idemkit.issued-keys.*}) and the secret that signs them. Imported
 * by {@link IdemkitAutoConfiguration}, under its conditions; the web layer builds the same {@link
 * IssuedKeys} through {@link #issuedKeys} when the engine is not configured.
 */
@Configuration(proxyBeanMethods = false)
class IdemkitIssuedKeysConfiguration {

  // Logs under the auto-configuration's name, as before the split.
  private static final Logger log = LoggerFactory.getLogger(IdemkitAutoConfiguration.class);

  private static final StandardOpenOption SYNC = StandardOpenOption.SYNC;

  @Bean
  @ConditionalOnMissingBean
  public IssuedKeys idemkitIssuedKeys(IdemkitProperties properties, Environment environment) {
    return issuedKeys(properties, environment);
  }

  /**
   * Issued keys as the properties say. The secret is {@code idemkit.issued-keys.secret}; only the
   * embedded demo database may go without one, and then a random secret kept in its data directory
   * signs the keys, so that they survive a restart as the records do. Anywhere else a missing
   * secret stops the start: a secret made up per process would invalidate every issued key at each
   * restart and differ between instances.
   */
  static IssuedKeys issuedKeys(IdemkitProperties properties, Environment environment) {
    String secret = properties.getIssuedKeys().getSecret();
    List<String> strict = properties.getIssuedKeys().getStrictOperations();
    String enforced =
        "Issued idempotency keys (ik_…): a key with that prefix must verify (signature, tenant,"
            + " operation, expiry) or is refused with 400 on every idempotent endpoint; "
            + (strict.isEmpty()
                ? "no operation is strict, so client-generated keys are accepted everywhere."
                : "only issued keys are accepted by " + String.join(", ", strict) + ".");
    log.info(enforced);
    byte[] bytes;
    String secretFile = properties.getIssuedKeys().getSecretFile();
    if (secret != null && !secret.isEmpty()) {
      bytes = secret.getBytes(StandardCharsets.UTF_8);
    } else if (secretFile != null && !secretFile.isEmpty()) {
      bytes = secretFromFile(Path.of(secretFile));
    } else if (environment.getProperty("idemkit.embedded.active", Boolean.class, false)) {
      Path file =
          Path.of(environment.getRequiredProperty("idemkit.embedded.data-dir"))
              .resolve(DEMO_SECRET_FILE);
      bytes = demoSecret(file);
      log.info(
          "idemkit.issued-keys.secret is not set: issued keys are signed with the embedded demo"
              + " database's secret in {}. Set idemkit.issued-keys.secret outside the demo.",
          file);
    } else {
      throw new KeySettingException(
          "idemkit.issued-keys.secret is not set, and only the embedded demo database makes one"
              + " up.",
          "Set idemkit.issued-keys.secret (e.g. IDEMKIT_ISSUED_KEYS_SECRET) to a random value of"
              + " at least 16 bytes, the same on every instance: it signs the keys the service"
              + " issues (IssuedKeys) and checks every key in their form (ik_...) in every"
              + " operation, so it is needed even if no operation is strict.");
    }
    if (bytes.length < 16) {
      String property =
          secret != null && !secret.isEmpty()
              ? "idemkit.issued-keys.secret"
              : "idemkit.issued-keys.secret-file";
      throw new KeySettingException(
          property
              + " holds "
              + bytes.length
              + " bytes; the issued-key secret must have at least 16 (a random value, the same on"
              + " every instance).",
          KeySettingException.fix(property));
    }
    return new IssuedKeys(
        bytes,
        properties.getIssuedKeys().getValidity(),
        new HashSet<>(properties.getIssuedKeys().getStrictOperations()),
        Clock.systemUTC());
  }

  /**
   * A secret kept in base64 in a file that must exist ({@code idemkit.issued-keys.secret-file}).
   */
  static byte[] secretFromFile(Path file) {
    try {
      return Base64.getDecoder().decode(Files.readString(file).trim());
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalStateException(
          "Could not read the issued-key secret from idemkit.issued-keys.secret-file "
              + file
              + " ("
              + e
              + "): it must exist and hold the secret in base64.",
          e);
    }
  }

  /** The demo's issued-key secret, beside the embedded database's data. */
  static final String DEMO_SECRET_FILE = "idemkit-issued-keys.secret";

  /**
   * Reads the demo secret in {@code file}, creating it on the first start. Written to a temporary
   * file and moved into place, so a crash never leaves a half-written secret.
   */
  static synchronized byte[] demoSecret(Path file) {
    try {
      if (!Files.exists(file)) {
        Path tmp = Files.createTempFile(file.getParent(), DEMO_SECRET_FILE, ".tmp");
        try {
          Files.writeString(
              tmp, Base64.getEncoder().encodeToString(IssuedKeys.randomSecret()), SYNC);
          Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
        } finally {
          Files.deleteIfExists(tmp);
        }
      }
      return Base64.getDecoder().decode(Files.readString(file).trim());
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalStateException(
          "Could not read or create the demo issued-key secret "
              + file
              + " ("
              + e.getMessage()
              + "); set idemkit.issued-keys.secret instead.",
          e);
    }
  }
}
