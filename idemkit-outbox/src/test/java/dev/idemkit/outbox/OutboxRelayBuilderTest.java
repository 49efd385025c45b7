package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Settings that would make the relay spin or never acknowledge are refused when set. */
class OutboxRelayBuilderTest {

  private static final DataSource NEVER_USED = new PGSimpleDataSource();

  private static OutboxRelay.Builder builder() {
    return OutboxRelay.builder(NEVER_USED, new RecordingTransport());
  }

  @Test
  void aZeroOrNegativeAckTimeoutIsRefused() {
    for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofMillis(-1)}) {
      assertThatThrownBy(() -> builder().ackTimeout(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ackTimeout");
    }
  }

  @Test
  void aZeroOrNegativeBackoffIsRefused() {
    assertThatThrownBy(() -> builder().backoff(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("initial backoff");
    assertThatThrownBy(() -> builder().backoff(Duration.ofSeconds(1), Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("max backoff");
    assertThatNoException()
        .isThrownBy(
            () ->
                builder()
                    .backoff(Duration.ofMillis(1), Duration.ofMillis(1))
                    .ackTimeout(Duration.ofMillis(1)));
  }
}
