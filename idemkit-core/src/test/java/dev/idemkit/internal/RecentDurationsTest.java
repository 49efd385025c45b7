package dev.idemkit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RecentDurationsTest {

  private final RecentDurations durations = new RecentDurations();

  @Test
  void anOperationThatTakesAFractionOfASecondSaysOneSecondNotTheLease() {
    for (int i = 0; i < 20; i++) {
      durations.record("create_payment", Duration.ofMillis(300));
    }
    assertThat(durations.retryAfter("create_payment", Duration.ofSeconds(30)))
        .isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void theNinetiethPercentileOfRecentRunsRoundedUp() {
    for (int i = 0; i < 90; i++) {
      durations.record("op", Duration.ofMillis(500));
    }
    for (int i = 0; i < 10; i++) {
      durations.record("op", Duration.ofMillis(4_200));
    }
    // The ring keeps the last 64 runs: 54 quick and 10 slow ones; the 90th percentile is slow.
    assertThat(durations.retryAfter("op", Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(5));
    assertThat(durations.retryAfter("other", Duration.ofSeconds(30)))
        .as("another operation has its own figures")
        .isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void neverMoreThanWhatIsLeftOfTheLeaseAndNeverLessThanOneSecond() {
    for (int i = 0; i < 10; i++) {
      durations.record("slow", Duration.ofSeconds(40));
    }
    assertThat(durations.retryAfter("slow", Duration.ofMillis(2_500)))
        .isEqualTo(Duration.ofSeconds(3));
    assertThat(durations.retryAfter("slow", Duration.ofMillis(-200)))
        .isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void anOwnerRunningLongerThanUsualIsAskedAgainAfterAsLongAgain() {
    for (int i = 0; i < 20; i++) {
      durations.record("create_payment", Duration.ofMillis(300));
    }
    assertThat(
            durations.retryAfter("create_payment", Duration.ofSeconds(29), Duration.ofMillis(400)))
        .isEqualTo(Duration.ofSeconds(1));
    assertThat(
            durations.retryAfter(
                "create_payment", Duration.ofSeconds(26), Duration.ofMillis(3_500)))
        .isEqualTo(Duration.ofSeconds(4));
    assertThat(
            durations.retryAfter("create_payment", Duration.ofSeconds(14), Duration.ofSeconds(16)))
        .as("never past the lease: a takeover is possible then")
        .isEqualTo(Duration.ofSeconds(14));
    // A dead owner's 30 s lease: the retries' waits double and meet its end in six attempts.
    Duration running = Duration.ZERO;
    int retries = 0;
    while (running.compareTo(Duration.ofSeconds(30)) < 0) {
      running =
          running.plus(
              durations.retryAfter(
                  "create_payment", Duration.ofSeconds(30).minus(running), running));
      retries++;
    }
    assertThat(retries).isLessThanOrEqualTo(6);
  }

  @Test
  void withNoRunSeenYetOneSecond() {
    assertThat(durations.retryAfter("new", Duration.ofSeconds(30)))
        .isEqualTo(Duration.ofSeconds(1));
  }
}
