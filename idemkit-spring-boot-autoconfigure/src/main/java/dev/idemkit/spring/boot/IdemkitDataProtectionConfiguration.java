package dev.idemkit.spring.boot;

import dev.idemkit.DataProtection;
import dev.idemkit.FingerprintRecipes;
import dev.idemkit.JsonFieldRedactor;
import dev.idemkit.ReplayMode;
import dev.idemkit.StaticKeyProvider;
import dev.idemkit.jdbc.PostgresDataKeyStore;
import dev.idemkit.spi.KeyProvider;
import dev.idemkit.spring.boot.IdemkitAutoConfiguration.IdemkitSchemaCheck;
import dev.idemkit.spring.boot.IdemkitAutoConfiguration.IdemkitSchemaInitializer;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;

/**
 * Stored answers as sensitive data, and how requests are fingerprinted ({@code
 * idemkit.protection.*}): the master keys and HMAC keys as configured, checked against what the
 * database holds at start-up. Imported by {@link IdemkitAutoConfiguration}, under its conditions.
 */
@Configuration(proxyBeanMethods = false)
class IdemkitDataProtectionConfiguration {

  // Logs under the auto-configuration's name, as before the split.
  private static final Logger log = LoggerFactory.getLogger(IdemkitAutoConfiguration.class);

  /**
   * Refuses an environment variable that meant to set a per-operation protection setting ({@code
   * IDEMKIT_PROTECTION_REDACT_<OPERATION>_DROP}, {@code _MASK}, {@code
   * IDEMKIT_PROTECTION_REPLAYMODES_<OPERATION>}) but was not bound to it: an environment variable
   * cannot spell an operation name with {@code _} or {@code -} (Spring reads {@code
   * CREATE_PAYMENT_DROP} as other keys), and the setting would be lost without a word, a security
   * code stored where it was to be dropped.
   */
  static void requirePerOperationSettingsBound(
      Environment environment, IdemkitProperties.Protection p) {
    if (!(environment instanceof ConfigurableEnvironment configurable)
        || !(configurable
                .getPropertySources()
                .get(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME)
            instanceof EnumerablePropertySource<?> variables)) {
      return;
    }
    for (String name : variables.getPropertyNames()) {
      String upper = name.toUpperCase(Locale.ROOT);
      String rest;
      boolean bound;
      if (upper.startsWith("IDEMKIT_PROTECTION_REDACT_")) {
        rest = upper.substring("IDEMKIT_PROTECTION_REDACT_".length());
        bound =
            p.getRedact().keySet().stream()
                .anyMatch(
                    op ->
                        rest.equals(variableName(op) + "_DROP")
                            || rest.equals(variableName(op) + "_MASK"));
      } else if (upper.startsWith("IDEMKIT_PROTECTION_REPLAYMODES_")
          || upper.startsWith("IDEMKIT_PROTECTION_REPLAY_MODES_")) {
        rest = upper.substring(upper.indexOf("MODES_") + "MODES_".length());
        bound = p.getReplayModes().keySet().stream().anyMatch(op -> rest.equals(variableName(op)));
      } else {
        continue;
      }
      if (!bound) {
        throw new IllegalStateException(
            "Environment variable "
                + name
                + " cannot set a per-operation setting: Spring cannot read an operation's name"
                + " with '_' or '-' from an environment variable, so it would be ignored. Give it"
                + " in a properties or YAML file, or as SPRING_APPLICATION_JSON, e.g."
                + " SPRING_APPLICATION_JSON='{\"idemkit.protection.redact.create_payment.drop\":"
                + "\"card.cvc\"}'");
      }
    }
  }

  private static String variableName(String operation) {
    return operation.toUpperCase(Locale.ROOT).replace('-', '_').replace('.', '_');
  }

  /**
   * Stored answers as sensitive data ({@code idemkit.protection.*}): encryption with tenant data
   * keys in {@code idemkit_data_key}, redaction, replay modes, upcasters. Everything is off unless
   * configured; a {@link KeyProvider} bean (a KMS) replaces the configured master keys.
   */
  @Bean
  @ConditionalOnMissingBean
  public DataProtection idemkitDataProtection(
      IdemkitProperties properties,
      DataSource dataSource,
      ObjectProvider<KeyProvider> keyProvider,
      ObjectProvider<IdempotentReference> references,
      ObjectProvider<IdempotentUpcaster> upcasters,
      ObjectProvider<IdempotentRedactor> redactors,
      ObjectProvider<IdemkitSchemaInitializer> schema,
      ObjectProvider<IdemkitSchemaCheck> schemaCheck,
      Environment environment) {
    IdemkitProperties.Protection p = properties.getProtection();
    requirePerOperationSettingsBound(environment, p);
    DataProtection.Builder b = DataProtection.builder();
    // Master keys from configuration are checked against the data keys they wrapped once the
    // protection is built (a KMS's are not: its availability at start-up is its own matter).
    boolean configuredMasterKeys = false;
    if (p.getEncryption().isEnabled()) {
      PostgresDataKeyStore dataKeys = new PostgresDataKeyStore(dataSource);
      configuredMasterKeys = keyProvider.getIfAvailable() == null;
      KeyProvider keys =
          keyProvider.getIfAvailable(
              () -> {
                if (p.getEncryption().getMasterKeys().isEmpty()) {
                  throw new KeySettingException(
                      "idemkit.protection.encryption.enabled=true needs master keys:"
                          + " idemkit.protection.encryption.master-keys.<id>=<base64 of 32 random"
                          + " bytes> and idemkit.protection.encryption.current-master-key=<id>, or a"
                          + " KeyProvider bean",
                      KeySettingException.fix("idemkit.protection.encryption.master-keys"));
                }
                StaticKeyProvider configured = masterKeys(p.getEncryption());
                // The schema exists (or its absence stopped the start) before its keys are read.
                schema.ifAvailable(s -> {});
                schemaCheck.ifAvailable(s -> {});
                requireMasterKeysInUse(dataSource, p.getEncryption().getMasterKeys().keySet());
                return configured;
              });
      b.encryption(keys, dataKeys).keyCacheTtl(p.getEncryption().getKeyCacheTtl());
    } else if (keyProvider.getIfAvailable() != null) {
      // Encryption turned off with a KMS still at hand: what it sealed still replays.
      b.decryptOnly(keyProvider.getObject(), new PostgresDataKeyStore(dataSource))
          .keyCacheTtl(p.getEncryption().getKeyCacheTtl());
    } else if (!p.getEncryption().getMasterKeys().isEmpty()) {
      // Encryption turned off with its keys still here: what it sealed still replays.
      PostgresDataKeyStore dataKeys = new PostgresDataKeyStore(dataSource);
      configuredMasterKeys = true;
      schema.ifAvailable(s -> {});
      schemaCheck.ifAvailable(s -> {});
      b.decryptOnly(readOnlyMasterKeys(p.getEncryption()), dataKeys)
          .keyCacheTtl(p.getEncryption().getKeyCacheTtl());
      Set<String> missing =
          missingMasterKeys(dataSource, p.getEncryption().getMasterKeys().keySet());
      log.warn(
          "idemkit.protection.encryption.master-keys is set, but"
              + " idemkit.protection.encryption.enabled is not true: new answers and recovery data"
              + " are stored in the clear; those sealed earlier are still opened with these keys"
              + " (read-only). Set idemkit.protection.encryption.enabled=true to seal again, or"
              + " remove the master keys once every sealed answer has passed its window and been"
              + " cleaned up.{}",
          missing.isEmpty()
              ? ""
              : " idemkit_data_key also holds data keys wrapped by master key(s) "
                  + String.join(", ", missing)
                  + ", not configured: answers sealed with them answer 500"
                  + " IDEMPOTENCY_RECORD_UNREADABLE.");
    } else if (!p.getEncryption().getCurrentMasterKey().isEmpty()) {
      log.warn(
          "idemkit.protection.encryption.current-master-key is set, but"
              + " idemkit.protection.encryption.enabled is not true and no master key is"
              + " configured: answers and recovery data are stored in the clear, and answers sealed"
              + " earlier cannot be read (500 IDEMPOTENCY_RECORD_UNREADABLE). Set"
              + " idemkit.protection.encryption.enabled=true with its master keys, or configure the"
              + " master keys alone to keep reading what was sealed.");
    }
    p.getRedact()
        .forEach(
            (operation, r) -> b.redact(operation, JsonFieldRedactor.of(r.getDrop(), r.getMask())));
    redactors.orderedStream().forEach(r -> b.redact(r.operation(), r));
    p.getReplayModes()
        .forEach(
            (operation, mode) -> {
              if (mode == ReplayMode.OUTCOME) {
                b.replayOutcome(operation);
              } else if (mode == ReplayMode.REFERENCE) {
                throw new IllegalStateException(
                    "idemkit.protection.replay-modes."
                        + operation
                        + "=REFERENCE: define an IdempotentReference bean for it instead");
              }
            });
    references
        .orderedStream()
        .forEach(r -> b.replayByReference(r.operation(), r.resourceType(), r));
    upcasters.orderedStream().forEach(u -> b.upcaster(u.operation(), u.fromVersion(), u));
    DataProtection protection = b.build();
    if (configuredMasterKeys) {
      requireMasterKeysUnwrap(protection, dataSource, p.getEncryption().getMasterKeys().keySet());
    }
    return protection;
  }

  /**
   * Every configured master key that wraps stored data keys must unwrap them: a key configured
   * under its id with another value (a typo, the wrong environment's secret) stops the start,
   * naming its property, instead of failing the first request of each of its tenants (an answer
   * that cannot be read is a 500, and never runs again). On shards, every shard's data keys.
   */
  static void requireMasterKeysUnwrap(
      DataProtection protection, DataSource dataSource, Set<String> configured) {
    // One that is not configured at all was refused or warned about already.
    Set<String> wrong = new java.util.TreeSet<>();
    if (dataSource instanceof TenantShards shards) {
      for (String shard : shards.names()) {
        Runnable check = () -> wrong.addAll(protection.masterKeysThatDoNotUnwrap());
        shards.on(shard, check);
      }
    } else {
      wrong.addAll(protection.masterKeysThatDoNotUnwrap());
    }
    wrong.retainAll(configured);
    if (!wrong.isEmpty()) {
      String first = "idemkit.protection.encryption.master-keys." + wrong.iterator().next();
      throw new KeySettingException(
          first
              + (wrong.size() > 1 ? " (and " + (wrong.size() - 1) + " more)" : "")
              + " does not unwrap the data keys it wrapped in idemkit_data_key: it is not the"
              + " value they were wrapped with.",
          "Configure that value again under this id (a new key takes a new id, made current,"
              + " then re-wrap).");
    }
  }

  /**
   * Every master key that wraps a stored data key must be configured: without it the answers sealed
   * with those data keys cannot be replayed (500 on every retry) and those tenants' new requests
   * fail, so a master key removed before its data keys were re-wrapped stops the start instead of
   * every such request.
   */
  static void requireMasterKeysInUse(DataSource dataSource, Set<String> configured) {
    Set<String> missing = missingMasterKeys(dataSource, configured);
    if (!missing.isEmpty()) {
      throw new KeySettingException(
          "idemkit_data_key holds tenant data keys wrapped by master key(s) "
              + String.join(", ", missing)
              + " that idemkit.protection.encryption.master-keys does not configure: the answers"
              + " and recovery data sealed with them could not be read, and those tenants' new"
              + " requests would fail. Configure "
              + (missing.size() == 1 ? "it" : "them")
              + " again (idemkit.protection.encryption.master-keys."
              + missing.iterator().next()
              + "=<its base64>); remove a master key only after"
              + " DataProtection.rewrapDataKeys(\""
              + missing.iterator().next()
              + "\") has re-wrapped its data keys under the current one.",
          KeySettingException.fix(
              "idemkit.protection.encryption.master-keys." + missing.iterator().next()));
    }
  }

  /**
   * The master keys that wrap stored data keys and are not {@code configured}: on shards, the data
   * keys of every shard (each tenant's are on its shard; at start-up no shard is bound).
   */
  private static Set<String> missingMasterKeys(DataSource dataSource, Set<String> configured) {
    Set<String> missing = new java.util.TreeSet<>();
    if (dataSource instanceof TenantShards shards) {
      for (String shard : shards.names()) {
        missing.addAll(new PostgresDataKeyStore(shards.shard(shard)).masterKeyIds());
      }
    } else {
      missing.addAll(new PostgresDataKeyStore(dataSource).masterKeyIds());
    }
    missing.removeAll(configured);
    return missing;
  }

  /**
   * The configured master keys with encryption off: they only open what was sealed, and wrap
   * nothing new except when data keys are re-wrapped, so the current one may be left unset when
   * there is only one.
   */
  private static StaticKeyProvider readOnlyMasterKeys(IdemkitProperties.Encryption encryption) {
    if (encryption.getCurrentMasterKey().isEmpty() && encryption.getMasterKeys().size() == 1) {
      IdemkitProperties.Encryption only = new IdemkitProperties.Encryption();
      only.setMasterKeys(encryption.getMasterKeys());
      only.setCurrentMasterKey(encryption.getMasterKeys().keySet().iterator().next());
      return masterKeys(only);
    }
    return masterKeys(encryption);
  }

  /**
   * How requests are fingerprinted: plain SHA-256 ({@code v1}), or HMAC-SHA-256 ({@code v2}) when
   * {@code idemkit.protection.fingerprint.current-hmac-key} is set. Define this bean to register
   * older canonical forms after a change of the command's shape.
   */
  @Bean
  @ConditionalOnMissingBean
  public FingerprintRecipes idemkitFingerprintRecipes(IdemkitProperties properties) {
    IdemkitProperties.Fingerprints f = properties.getProtection().getFingerprint();
    FingerprintRecipes.Builder b = FingerprintRecipes.builder();
    f.getHmacKeys()
        .forEach(
            (id, key) -> {
              String property = "idemkit.protection.fingerprint.hmac-keys." + id;
              try {
                b.hmacKey(id, base64(property, key));
              } catch (IllegalArgumentException e) {
                throw new KeySettingException(
                    property + ": " + e.getMessage(), KeySettingException.fix(property));
              }
            });
    String current = f.getCurrentHmacKey();
    if (!current.isEmpty()) {
      if (!f.getHmacKeys().containsKey(current)) {
        throw new KeySettingException(
            "idemkit.protection.fingerprint.current-hmac-key="
                + current
                + " names no key: set idemkit.protection.fingerprint.hmac-keys."
                + current
                + "=<base64 of at least 32 random bytes>",
            KeySettingException.fix("idemkit.protection.fingerprint.current-hmac-key"));
      }
      b.currentHmacKey(current).current(FingerprintRecipes.V2);
    }
    return b.build();
  }

  /** The configured master keys, or an error that names the property at fault. */
  private static StaticKeyProvider masterKeys(IdemkitProperties.Encryption encryption) {
    Map<String, byte[]> keys = new LinkedHashMap<>();
    encryption
        .getMasterKeys()
        .forEach(
            (id, text) -> {
              String property = "idemkit.protection.encryption.master-keys." + id;
              byte[] key = base64(property, text);
              if (key.length != 32) {
                throw new KeySettingException(
                    property
                        + " must be 32 bytes (AES-256) in base64; it is "
                        + key.length
                        + " bytes",
                    KeySettingException.fix(property));
              }
              keys.put(id, key);
            });
    String current = encryption.getCurrentMasterKey();
    if (!keys.containsKey(current)) {
      throw new KeySettingException(
          "idemkit.protection.encryption.current-master-key="
              + current
              + " names no key under idemkit.protection.encryption.master-keys (configured: "
              + String.join(", ", keys.keySet())
              + ")",
          KeySettingException.fix("idemkit.protection.encryption.current-master-key"));
    }
    return StaticKeyProvider.of(keys, current);
  }

  private static byte[] base64(String property, String text) {
    try {
      return Base64.getDecoder().decode(text.trim());
    } catch (IllegalArgumentException e) {
      throw new KeySettingException(
          property + " is not base64: " + e.getMessage(), KeySettingException.fix(property));
    }
  }
}
