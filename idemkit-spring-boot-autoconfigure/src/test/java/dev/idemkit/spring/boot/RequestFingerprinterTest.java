package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Fingerprint;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class RequestFingerprinterTest {

  private final RequestFingerprinter fingerprinter =
      new RequestFingerprinter(JsonMapper.builder().build());

  /** A plain request body, fingerprinted from its JSON form. */
  record CreatePayment(String currency, BigDecimal amount, List<String> tags) {}

  /** The same fields, declared in another order. */
  record CreatePaymentReordered(List<String> tags, BigDecimal amount, String currency) {}

  /** A request body that says what it means: the amount normalized, the shape versioned. */
  record CanonicalPayment(String currency, String amount, String note) implements CanonicalCommand {
    @Override
    public Object canonicalForm() {
      return Map.of(
          "v",
          1,
          "currency",
          currency,
          "amount",
          new BigDecimal(amount).stripTrailingZeros().toPlainString());
    }
  }

  private static final CreatePayment PAYMENT =
      new CreatePayment("EUR", new BigDecimal("10.50"), List.of("a", "b"));

  @Test
  void theSameCommandGivesTheSameFingerprint() {
    Fingerprint first =
        fingerprinter.fingerprint("create_payment", PAYMENT, Map.of("account", "acc-1"), "v1");
    Fingerprint second =
        fingerprinter.fingerprint(
            "create_payment",
            new CreatePayment("EUR", new BigDecimal("10.50"), List.of("a", "b")),
            Map.of("account", "acc-1"),
            "v1");

    assertThat(second).isEqualTo(first);
  }

  @Test
  void theCanonicalFormIsWhatIsHashed() {
    Fingerprint ten =
        fingerprinter.fingerprint(
            "create_payment", new CanonicalPayment("EUR", "10", "first try"), Map.of(), "v1");
    Fingerprint tenPointZeroZero =
        fingerprinter.fingerprint(
            "create_payment", new CanonicalPayment("EUR", "10.00", "second try"), Map.of(), "v1");
    Fingerprint eleven =
        fingerprinter.fingerprint(
            "create_payment", new CanonicalPayment("EUR", "11", "first try"), Map.of(), "v1");

    assertThat(tenPointZeroZero).isEqualTo(ten);
    assertThat(eleven).isNotEqualTo(ten);
  }

  /**
   * The recipe is a contract: fingerprints are stored with their records, so the tree hashed must
   * not change shape without a new fingerprint version.
   */
  @Test
  void theFingerprintIsTheV1HashOfOperationPathApiVersionAndCommand() {
    CanonicalPayment command = new CanonicalPayment("EUR", "10.00", "ignored");

    Fingerprint fingerprint =
        fingerprinter.fingerprint(
            "create_payment", command, Map.of("account", "acc-1"), "2025-01-01");

    assertThat(fingerprint)
        .isEqualTo(
            Fingerprint.of(
                Map.of(
                    "operation",
                    "create_payment",
                    "path",
                    Map.of("account", "acc-1"),
                    "apiVersion",
                    "2025-01-01",
                    "command",
                    Map.of("v", 1, "currency", "EUR", "amount", "10"))));
  }

  @Test
  void theOperationChangesIt() {
    assertThat(fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), "v1"))
        .isNotEqualTo(fingerprinter.fingerprint("create_refund", PAYMENT, Map.of(), "v1"));
  }

  @Test
  void pathVariablesChangeIt() {
    Fingerprint account1 =
        fingerprinter.fingerprint("create_payment", PAYMENT, Map.of("account", "acc-1"), "v1");

    assertThat(
            fingerprinter.fingerprint("create_payment", PAYMENT, Map.of("account", "acc-2"), "v1"))
        .isNotEqualTo(account1);
    assertThat(fingerprinter.fingerprint("create_payment", PAYMENT, Map.of("acct", "acc-1"), "v1"))
        .isNotEqualTo(account1);
    assertThat(fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), "v1"))
        .isNotEqualTo(account1);
  }

  @Test
  void theOrderOfPathVariablesDoesNotMatter() {
    Map<String, String> ab = new LinkedHashMap<>();
    ab.put("account", "acc-1");
    ab.put("order", "ord-9");
    Map<String, String> ba = new LinkedHashMap<>();
    ba.put("order", "ord-9");
    ba.put("account", "acc-1");

    assertThat(fingerprinter.fingerprint("capture", PAYMENT, ba, "v1"))
        .isEqualTo(fingerprinter.fingerprint("capture", PAYMENT, ab, "v1"));
  }

  @Test
  void theApiVersionChangesIt() {
    assertThat(fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), "2025-01-01"))
        .isNotEqualTo(fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), "2025-06-01"));
    assertThat(fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), "2025-01-01"))
        .isNotEqualTo(fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), null));
  }

  @Test
  void aPlainRecordIsFingerprintedFromItsJsonForm() {
    Fingerprint fingerprint = fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), "v1");

    assertThat(fingerprint)
        .isEqualTo(
            Fingerprint.of(
                Map.of(
                    "operation",
                    "create_payment",
                    "path",
                    Map.of(),
                    "apiVersion",
                    "v1",
                    "command",
                    Map.of(
                        "currency",
                        "EUR",
                        "amount",
                        new BigDecimal("10.5"),
                        "tags",
                        List.of("a", "b")))));
  }

  @Test
  void theJsonFormIgnoresFieldOrderButNotValues() {
    Fingerprint declared = fingerprinter.fingerprint("create_payment", PAYMENT, Map.of(), "v1");
    Fingerprint reordered =
        fingerprinter.fingerprint(
            "create_payment",
            new CreatePaymentReordered(List.of("a", "b"), new BigDecimal("10.50"), "EUR"),
            Map.of(),
            "v1");
    Fingerprint otherTagOrder =
        fingerprinter.fingerprint(
            "create_payment",
            new CreatePayment("EUR", new BigDecimal("10.50"), List.of("b", "a")),
            Map.of(),
            "v1");

    assertThat(reordered).isEqualTo(declared);
    assertThat(otherTagOrder).isNotEqualTo(declared);
  }

  @Test
  void aRequestWithoutABodyHasAFingerprintOfItsOwn() {
    Fingerprint noBody = fingerprinter.fingerprint("cancel", null, Map.of("id", "p-1"), "v1");

    assertThat(noBody)
        .isEqualTo(fingerprinter.fingerprint("cancel", null, Map.of("id", "p-1"), "v1"))
        .isNotEqualTo(fingerprinter.fingerprint("cancel", Map.of(), Map.of("id", "p-1"), "v1"));
  }
}
