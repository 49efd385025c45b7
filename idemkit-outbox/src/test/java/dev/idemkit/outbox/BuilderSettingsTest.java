package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The inbox's, the delivery sender's, the outbox's and the embedded transport's settings: a value
 * that would make a part spin or forget too early is refused, naming the setting and the value.
 */
class BuilderSettingsTest {

  private static final DataSource NEVER_USED = new PGSimpleDataSource();

  private static InboxConsumer.Builder inbox() {
    return InboxConsumer.builder("ledger", NEVER_USED, (tx, m) -> {})
        .redeliveryHorizon(Duration.ofDays(7));
  }

  private static void inboxRefuses(UnaryOperator<InboxConsumer.Builder> s, String... message) {
    assertThatThrownBy(() -> s.apply(inbox()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("Inbox consumer ledger: ")
        .hasMessageContainingAll(message);
  }

  @Test
  void theInboxRefusesAZeroOrNegativeRetentionOrHorizonAndAttemptsBelowOne() {
    inboxRefuses(b -> b.retention(Duration.ZERO), "retention must be positive, was PT0S");
    inboxRefuses(b -> b.retention(Duration.ofDays(-14)), "retention", "PT-336H");
    // Without the check a negative horizon let a zero-length retention through.
    inboxRefuses(
        b -> b.redeliveryHorizon(Duration.ofDays(-1)).retention(Duration.ofSeconds(1)),
        "redeliveryHorizon must be positive, was PT-24H");
    inboxRefuses(b -> b.redeliveryHorizon(Duration.ZERO), "redeliveryHorizon", "PT0S");
    inboxRefuses(b -> b.maxAttempts(0), "maxAttempts must be at least 1, was 0");
    assertThatThrownBy(() -> inbox().retention(Duration.ofDays(7)).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("(PT168H) must exceed the transport's redelivery horizon (PT168H)");
    assertThatNoException().isThrownBy(() -> inbox().retention(Duration.ofDays(8)).build());
  }

  private static DeliverySender.Builder sender() {
    return DeliverySender.builder(NEVER_USED, "mail", (key, payload) -> {});
  }

  private static void senderRefuses(UnaryOperator<DeliverySender.Builder> s, String... message) {
    assertThatThrownBy(() -> s.apply(sender()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("DeliverySender mail: ")
        .hasMessageContainingAll(message);
  }

  @Test
  void theDeliverySenderRefusesADeliveredRetentionZeroNegativeOrShorterThanItsInboxs() {
    senderRefuses(
        b -> b.deliveredRetention(Duration.ZERO), "deliveredRetention must be positive, was PT0S");
    senderRefuses(b -> b.deliveredRetention(Duration.ofDays(-1)), "deliveredRetention", "PT-24H");
    InboxConsumer receipts = inbox().retention(Duration.ofDays(14)).build();
    assertThatThrownBy(
            () -> sender().deliveredRetention(Duration.ofDays(7)).recordedBy(receipts).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContainingAll(
            "DeliverySender mail", "deliveredRetention (PT168H)", "ledger", "(PT336H)");
    assertThatNoException()
        .isThrownBy(
            () -> sender().deliveredRetention(Duration.ofDays(14)).recordedBy(receipts).build());
    assertThatNoException().isThrownBy(() -> sender().recordedBy(receipts).build());
    InboxConsumer longer = inbox().retention(Duration.ofDays(30)).build();
    assertThatThrownBy(() -> sender().recordedBy(receipts).recordedBy(longer).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContainingAll("deliveredRetention (PT336H)", "(PT720H)");
  }

  @Test
  void theDeliverySenderRefusesCountsBelowOneAndDurationsThatWouldSpin() {
    senderRefuses(b -> b.batchSize(0), "batchSize must be at least 1, was 0");
    senderRefuses(b -> b.batchSize(-1), "batchSize", "-1");
    senderRefuses(b -> b.maxAttempts(0), "maxAttempts must be at least 1, was 0");
    senderRefuses(
        b -> b.backoff(Duration.ZERO, Duration.ofMinutes(5)),
        "initial backoff must be positive, was PT0S");
    senderRefuses(
        b -> b.backoff(Duration.ofSeconds(1), Duration.ofSeconds(-1)), "max backoff", "PT-1S");
    senderRefuses(
        b -> b.backoff(Duration.ofMinutes(1), Duration.ofSeconds(1)),
        "max backoff must not be less than the initial backoff");
    senderRefuses(
        b -> b.pollInterval(Duration.ZERO), "pollInterval must be at least 1 ms, was PT0S");
    senderRefuses(b -> b.pollInterval(Duration.ofMillis(-100)), "pollInterval", "PT-0.1S");
    assertThatNoException()
        .isThrownBy(
            () ->
                sender()
                    .batchSize(1)
                    .maxAttempts(1)
                    .backoff(Duration.ofMillis(1), Duration.ofMillis(1))
                    .pollInterval(Duration.ofMillis(1))
                    .build());
  }

  @Test
  void theOutboxRefusesAPayloadLimitBelowOneByte() {
    assertThatThrownBy(() -> Outbox.builder(NEVER_USED).maxPayloadBytes(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Outbox: maxPayloadBytes must be at least 1, was 0");
    assertThatNoException().isThrownBy(() -> Outbox.builder(NEVER_USED).maxPayloadBytes(1).build());
  }

  @Test
  void theEmbeddedTransportRefusesAZeroOrNegativeHorizon() {
    assertThatThrownBy(() -> EmbeddedTransport.create(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("EmbeddedTransport: redeliveryHorizon must be positive, was PT0S");
    assertThatThrownBy(() -> EmbeddedTransport.create(Duration.ofDays(-1)))
        .hasMessageContaining("PT-24H");
  }
}
