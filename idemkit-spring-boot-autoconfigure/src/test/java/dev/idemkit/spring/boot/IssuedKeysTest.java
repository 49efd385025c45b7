package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import dev.idemkit.IdempotencyKey;
import dev.idemkit.testing.MutableClock;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IssuedKeysTest {

  private static final byte[] SECRET =
      "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  /** Half a second past a whole second, so the expiry's truncation to seconds shows. */
  private final MutableClock clock = new MutableClock(Instant.parse("2025-03-01T10:00:00.500Z"));

  private final IssuedKeys keys =
      new IssuedKeys(SECRET, Duration.ofHours(1), Set.of("strict_op"), clock);

  @Test
  void anIssuedKeyVerifiesForItsTenantAndOperation() {
    IssuedKeys.Issued issued = keys.issue("tenant-a", "create_payment");

    assertThat(keys.verify(issued.key(), "tenant-a", "create_payment")).isTrue();
    assertThat(issued.key().value()).startsWith("ik_");
    assertThat(issued.expiresAt()).isEqualTo(Instant.parse("2025-03-01T11:00:00Z"));
  }

  @Test
  void everyIssueGivesANewKey() {
    assertThat(keys.issue("tenant-a", "op").key()).isNotEqualTo(keys.issue("tenant-a", "op").key());
  }

  @Test
  void anIssuedKeyKeepsTheRulesOfAnIdempotencyKey() {
    String value = keys.issue("tenant-a", "create_payment").key().value();

    assertThat(value.length()).isBetween(1, IdempotencyKey.MAX_LENGTH);
    assertThat(value.chars()).allMatch(c -> c >= 0x21 && c <= 0x7E);
    assertThat(IdempotencyKey.fromHeader(value).value()).isEqualTo(value);
    assertThat(IdempotencyKey.fromHeader("\"" + value + "\"").value()).isEqualTo(value);
  }

  @Test
  void aKeyIsRefusedForAnotherTenant() {
    IdempotencyKey key = keys.issue("tenant-a", "create_payment").key();

    assertThat(keys.verify(key, "tenant-b", "create_payment")).isFalse();
  }

  @Test
  void aKeyIsRefusedForAnotherOperation() {
    IdempotencyKey key = keys.issue("tenant-a", "create_payment").key();

    assertThat(keys.verify(key, "tenant-a", "refund_payment")).isFalse();
  }

  @Test
  void tenantAndOperationAreNotInterchangeable() {
    IdempotencyKey key = keys.issue("ab", "c").key();

    assertThat(keys.verify(key, "a", "bc")).isFalse();
    assertThat(keys.verify(key, "c", "ab")).isFalse();
  }

  @Test
  void aKeyIsAcceptedUntilItExpiresAndRefusedFromThen() {
    IssuedKeys.Issued issued = keys.issue("tenant-a", "create_payment");

    clock.set(issued.expiresAt().minusMillis(1));
    assertThat(keys.verify(issued.key(), "tenant-a", "create_payment")).isTrue();

    clock.set(issued.expiresAt());
    assertThat(keys.verify(issued.key(), "tenant-a", "create_payment")).isFalse();

    clock.advance(Duration.ofDays(1));
    assertThat(keys.verify(issued.key(), "tenant-a", "create_payment")).isFalse();
  }

  @Test
  void otherSpellingsOfTheSameBytesAreRefused() {
    String value = keys.issue("tenant-a", "create_payment").key().value();
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    int last = alphabet.indexOf(value.charAt(value.length() - 1));
    String head = value.substring(0, value.length() - 1);
    int dot = value.indexOf('.');
    byte[] payload = Base64.getUrlDecoder().decode(value.substring(3, dot));

    for (String variant :
        new String[] {
          value + "=",
          value + "==",
          head + alphabet.charAt(last ^ 1),
          head + alphabet.charAt(last ^ 2),
          head + alphabet.charAt(last ^ 3),
          "ik_" + Base64.getUrlEncoder().encodeToString(payload) + value.substring(dot),
          "ik_" + Base64.getEncoder().encodeToString(payload) + value.substring(dot)
        }) {
      if (variant.equals(value)) {
        continue;
      }
      assertThat(keys.check(IdempotencyKey.of(variant), "tenant-a", "create_payment"))
          .as(variant)
          .isEqualTo(IssuedKeys.Check.NOT_VERIFIED);
    }
    assertThat(keys.check(IdempotencyKey.of(value), "tenant-a", "create_payment"))
        .isEqualTo(IssuedKeys.Check.VALID);
  }

  @Test
  void theIssuedPrefixInAnotherCaseIsAnotherSpellingNotAClientKey() {
    String value = keys.issue("tenant-a", "create_payment").key().value();

    for (String variant :
        new String[] {
          "IK_" + value.substring(3), "Ik_" + value.substring(3), value.toUpperCase(), "IK_x"
        }) {
      assertThat(keys.check(IdempotencyKey.of(variant), "tenant-a", "create_payment"))
          .as(variant)
          .isEqualTo(IssuedKeys.Check.NOT_VERIFIED);
      assertThat(IssuedKeys.hasIssuedForm(IdempotencyKey.of(variant))).as(variant).isTrue();
    }
    assertThat(IssuedKeys.hasIssuedForm(IdempotencyKey.of("ikx-client-key"))).isFalse();
  }

  @Test
  void aKeyPastItsValidityIsExpiredNotForged() {
    IssuedKeys.Issued issued = keys.issue("tenant-a", "create_payment");
    clock.set(issued.expiresAt());

    assertThat(keys.check(issued.key(), "tenant-a", "create_payment"))
        .isEqualTo(IssuedKeys.Check.EXPIRED);
    assertThat(keys.check(issued.key(), "tenant-b", "create_payment"))
        .isEqualTo(IssuedKeys.Check.NOT_VERIFIED);
    assertThat(keys.check(IdempotencyKey.of("a-client-key"), "tenant-a", "create_payment"))
        .isEqualTo(IssuedKeys.Check.NOT_ISSUED_FORM);
  }

  @Test
  void aTamperedPayloadIsRefused() {
    String value = keys.issue("tenant-a", "create_payment").key().value();
    int dot = value.indexOf('.');

    // 24 payload bytes are exactly 32 base64 characters: any changed character changes a byte.
    for (int i = 3; i < dot; i++) {
      String tampered = replaceAt(value, i);
      assertThat(keys.verify(IdempotencyKey.of(tampered), "tenant-a", "create_payment"))
          .as("payload character %d changed: %s", i, tampered)
          .isFalse();
    }
  }

  @Test
  void aPayloadWithALaterExpiryDoesNotVerify() {
    String value = keys.issue("tenant-a", "create_payment").key().value();
    int dot = value.indexOf('.');
    byte[] payload = Base64.getUrlDecoder().decode(value.substring(3, dot));
    ByteBuffer.wrap(payload).putLong(16, Long.MAX_VALUE);
    String extended =
        "ik_"
            + Base64.getUrlEncoder().withoutPadding().encodeToString(payload)
            + value.substring(dot);

    assertThat(keys.verify(IdempotencyKey.of(extended), "tenant-a", "create_payment")).isFalse();
  }

  @Test
  void aTamperedMacIsRefused() {
    String value = keys.issue("tenant-a", "create_payment").key().value();
    int dot = value.indexOf('.');

    // The last of the 27 MAC characters carries 2 unused bits; the others are all significant.
    for (int i = dot + 1; i < value.length() - 1; i++) {
      String tampered = replaceAt(value, i);
      assertThat(keys.verify(IdempotencyKey.of(tampered), "tenant-a", "create_payment"))
          .as("MAC character %d changed: %s", i, tampered)
          .isFalse();
    }
    assertThat(keys.verify(IdempotencyKey.of(value.substring(0, dot + 1) + "x"), "t", "o"))
        .isFalse();
    assertThat(
            keys.verify(
                IdempotencyKey.of(value.substring(0, value.length() - 4)),
                "tenant-a",
                "create_payment"))
        .isFalse();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "8e03978e-40d5-43e8-bc93-6894a57f9324",
        "ik_",
        "ik_.",
        "ik_nodot",
        "ik_!!!!.####",
        "ik_AAAA.AAAA",
        "ik_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.",
        "ik_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "ik_a.b.c",
        "ik_=.=",
        "IK_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAA",
        ".ik_",
        "x"
      })
  void garbageIsRefusedWithoutAnException(String garbage) {
    assertThat(keys.verify(IdempotencyKey.of(garbage), "tenant-a", "create_payment")).isFalse();
  }

  @Test
  void aKeyIssuedWithAnotherSecretIsRefused() {
    byte[] otherSecret = Arrays.copyOf(SECRET, SECRET.length);
    otherSecret[0] ^= 1;
    IssuedKeys other = new IssuedKeys(otherSecret, Duration.ofHours(1), Set.of(), clock);
    IdempotencyKey foreign = other.issue("tenant-a", "create_payment").key();

    assertThat(keys.verify(foreign, "tenant-a", "create_payment")).isFalse();
    assertThat(other.verify(foreign, "tenant-a", "create_payment")).isTrue();
  }

  @Test
  void theSecretIsCopiedAtConstruction() {
    byte[] secret = Arrays.copyOf(SECRET, SECRET.length);
    IssuedKeys issuer = new IssuedKeys(secret, Duration.ofHours(1), Set.of(), clock);
    IdempotencyKey key = issuer.issue("tenant-a", "op").key();

    Arrays.fill(secret, (byte) 0);

    assertThat(issuer.verify(key, "tenant-a", "op")).isTrue();
  }

  @Test
  void aKeyFromAnotherInstanceWithTheSameSecretVerifies() {
    IssuedKeys otherInstance = new IssuedKeys(SECRET.clone(), Duration.ofHours(1), Set.of(), clock);

    assertThat(otherInstance.verify(keys.issue("tenant-a", "op").key(), "tenant-a", "op")).isTrue();
  }

  @Test
  void strictOperationsAreTheConfiguredOnes() {
    assertThat(keys.isStrict("strict_op")).isTrue();
    assertThat(keys.isStrict("create_payment")).isFalse();
    assertThat(keys.isStrict("STRICT_OP")).isFalse();
  }

  @Test
  void aShortSecretIsRefused() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new IssuedKeys(new byte[15], Duration.ofHours(1), Set.of(), clock))
        .withMessageContaining("at least 16 bytes");
  }

  @Test
  void randomSecretsAre32BytesAndDiffer() {
    byte[] a = IssuedKeys.randomSecret();
    byte[] b = IssuedKeys.randomSecret();

    assertThat(a).hasSize(32);
    assertThat(a).isNotEqualTo(b);
  }

  /** The same string with the character at {@code i} replaced by another base64url character. */
  private static String replaceAt(String s, int i) {
    char c = s.charAt(i);
    char replacement = c == 'A' ? 'B' : 'A';
    return s.substring(0, i) + replacement + s.substring(i + 1);
  }
}
