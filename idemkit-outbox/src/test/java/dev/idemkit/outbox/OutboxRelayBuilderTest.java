package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Settings that would make the relay spin, never acknowledge or delete at once are refused by
 * {@code build()}, naming the setting and the value.
 */
class OutboxRelayBuilderTest {

  private static final DataSource NEVER_USED = new PGSimpleDataSource();

  private static OutboxRelay.Builder builder() {
    return OutboxRelay.builder(NEVER_USED, new RecordingTransport());
  }

  private static void refused(UnaryOperator<OutboxRelay.Builder> setting, String... message) {
    assertThatThrownBy(() -> setting.apply(builder()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("OutboxRelay: ")
        .hasMessageContainingAll(message);
  }

  @Test
  void aZeroOrNegativeAckTimeoutIsRefused() {
    refused(b -> b.ackTimeout(Duration.ZERO), "ackTimeout must be positive, was PT0S");
    refused(b -> b.ackTimeout(Duration.ofMillis(-1)), "ackTimeout", "PT-0.001S");
  }

  @Test
  void aZeroOrNegativeBackoffIsRefused() {
    refused(b -> b.backoff(Duration.ZERO, Duration.ofSeconds(1)), "initial backoff", "PT0S");
    refused(b -> b.backoff(Duration.ofSeconds(1), Duration.ofSeconds(-1)), "max backoff", "PT-1S");
    refused(
        b -> b.backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)),
        "max backoff must not be less than the initial backoff, was PT1S");
    assertThatNoException()
        .isThrownBy(
            () ->
                builder()
                    .backoff(Duration.ofMillis(1), Duration.ofMillis(1))
                    .ackTimeout(Duration.ofMillis(1))
                    .pollInterval(Duration.ofMillis(1))
                    .build());
  }

  @Test
  void aZeroOrNegativeSentRetentionIsRefused() {
    refused(b -> b.sentRetention(Duration.ZERO), "sentRetention must be positive, was PT0S");
    refused(b -> b.sentRetention(Duration.ofDays(-7)), "sentRetention", "PT-168H");
  }

  @Test
  void aPollIntervalUnderAMillisecondIsRefused() {
    refused(b -> b.pollInterval(Duration.ZERO), "pollInterval must be at least 1 ms, was PT0S");
    refused(b -> b.pollInterval(Duration.ofMillis(-50)), "pollInterval", "PT-0.05S");
    refused(b -> b.pollInterval(Duration.ofNanos(500_000)), "pollInterval", "PT0.0005S");
  }

  @Test
  void countsBelowOneAreRefused() {
    refused(b -> b.batchSize(0), "batchSize must be at least 1, was 0");
    refused(b -> b.batchSize(-5), "batchSize", "-5");
    refused(b -> b.maxAttempts(0), "maxAttempts must be at least 1, was 0");
    refused(b -> b.threads(0), "threads must be at least 1, was 0");
    refused(b -> b.aggregateWindow(-1), "aggregateWindow must be at least 1, was -1");
  }
}
