package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.kafka.TopicRetention.Bounded;
import dev.idemkit.kafka.TopicRetention.Unbounded;
import dev.idemkit.kafka.TopicRetention.Unknown;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.junit.jupiter.api.Test;

/** What the start-up check decides from what the cluster said; no broker is reached. */
class RetentionCheckTest {

  private static final Duration INBOX = Duration.ofDays(14);
  private static final Duration CONFIGURED = Duration.ofDays(7);

  @Test
  void aRetentionEqualToTheInboxRetentionIsRefusedAsALongerOneIs() {
    assertThatThrownBy(
            () ->
                RetentionCheck.verify(
                    "ledger",
                    INBOX,
                    CONFIGURED,
                    false,
                    List.of(
                        new Bounded("t.short", Duration.ofDays(3), "retention.ms=259200000"),
                        new Bounded("t.equal", INBOX, "retention.ms=1209600000"),
                        new Bounded("t.long", Duration.ofDays(20), "retention.ms=1728000000"))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("topic t.equal keeps records for 14 days (retention.ms=1209600000)")
        .hasMessageContaining("topic t.long keeps records for 20 days")
        .hasMessageContaining("Raise the inbox retention above 20 days")
        .hasMessageNotContaining("t.short");
    assertThatCode(
            () ->
                RetentionCheck.verify(
                    "ledger",
                    INBOX,
                    CONFIGURED,
                    false,
                    List.of(new Bounded("t", INBOX.minusMillis(1), "retention.ms=1209599999"))))
        .doesNotThrowAnyException();
  }

  @Test
  void unboundedTopicsAreRefusedUnlessAcceptedAndFiniteOnesAreStillChecked() {
    List<TopicRetention> forEver =
        List.of(
            new Unbounded("t.log", "retention.ms=-1"),
            new Unbounded("t.kv", "cleanup.policy=compact"));
    assertThatThrownBy(() -> RetentionCheck.verify("ledger", INBOX, CONFIGURED, false, forEver))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("topic t.log keeps records for ever (retention.ms=-1)")
        .hasMessageContaining("topic t.kv keeps each key's latest record for ever")
        .hasMessageContaining("acceptUnboundedRetention(true)")
        .hasMessageNotContaining("Raise the inbox retention");
    assertThatCode(() -> RetentionCheck.verify("ledger", INBOX, CONFIGURED, true, forEver))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () ->
                RetentionCheck.verify(
                    "ledger",
                    INBOX,
                    CONFIGURED,
                    true,
                    List.of(
                        forEver.get(0),
                        new Bounded("t.long", Duration.ofDays(30), "retention.ms"))))
        .hasMessageContaining("t.long")
        .hasMessageNotContaining("t.log");
  }

  @Test
  void aTopicTheClusterCouldNotTellAboutLeavesTheConfiguredHorizonToDecide() {
    assertThatCode(
            () ->
                RetentionCheck.verify(
                    "ledger",
                    INBOX,
                    CONFIGURED,
                    false,
                    List.of(new Unknown("t", "no answer from the cluster within 5 s"))))
        .doesNotThrowAnyException();
  }

  @Test
  void theTopicsSettingsAreReadAsKafkaAppliesThem() {
    assertThat(
            RetentionCheck.fromTopic("t", config("cleanup.policy", "delete", "retention.ms", "5")))
        .isEqualTo(new Bounded("t", Duration.ofMillis(5), "retention.ms=5"));
    assertThat(
            RetentionCheck.fromTopic("t", config("cleanup.policy", "delete", "retention.ms", "-1")))
        .isEqualTo(new Unbounded("t", "retention.ms=-1"));
    assertThat(
            RetentionCheck.fromTopic("t", config("cleanup.policy", "compact", "retention.ms", "5")))
        .isEqualTo(new Unbounded("t", "cleanup.policy=compact"));
    // compact,delete deletes by time as well.
    assertThat(
            RetentionCheck.fromTopic(
                "t", config("cleanup.policy", "compact, delete", "retention.ms", "5")))
        .isInstanceOf(Bounded.class);
    // The broker's defaults: ms before minutes before hours.
    assertThat(
            RetentionCheck.fromBrokerDefaults(
                "t", config("log.retention.minutes", "90", "log.retention.hours", "168")))
        .isEqualTo(
            new Bounded(
                "t",
                Duration.ofMinutes(90),
                "not created yet: the broker's log.retention.minutes=90"));
    assertThat(RetentionCheck.fromBrokerDefaults("t", config("log.retention.hours", "168")))
        .extracting(r -> ((Bounded) r).retention())
        .isEqualTo(Duration.ofDays(7));
    assertThat(RetentionCheck.fromBrokerDefaults("t", config("log.retention.ms", "-1")))
        .isInstanceOf(Unbounded.class);
  }

  @Test
  void durationsReadAsPeopleWriteThem() {
    assertThat(RetentionCheck.readable(Duration.ofDays(30))).isEqualTo("30 days");
    assertThat(RetentionCheck.readable(Duration.ofHours(1))).isEqualTo("1 hour");
    assertThat(RetentionCheck.readable(Duration.ofSeconds(5))).isEqualTo("5 s");
    assertThat(RetentionCheck.readable(Duration.ofMillis(1_500))).isEqualTo("1500 ms");
  }

  private static Config config(String... nameValue) {
    List<ConfigEntry> entries = new java.util.ArrayList<>();
    for (int i = 0; i < nameValue.length; i += 2) {
      entries.add(new ConfigEntry(nameValue[i], nameValue[i + 1]));
    }
    return new Config(entries);
  }
}
