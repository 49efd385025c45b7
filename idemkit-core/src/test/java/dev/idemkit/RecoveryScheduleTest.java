package dev.idemkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RecoveryScheduleTest {

  private final RecoverySchedule schedule =
      new RecoverySchedule(Duration.ofSeconds(10), Duration.ofMinutes(1), 8);

  @Test
  void waitsTheFirstDelayUpToTheSecondAttemptThenDoublesUpToTheLongestWait() {
    assertThat(schedule.delayAfter(0)).isEqualTo(Duration.ofSeconds(10));
    assertThat(schedule.delayAfter(1)).isEqualTo(Duration.ofSeconds(10));
    assertThat(schedule.delayAfter(2)).isEqualTo(Duration.ofSeconds(10));
    assertThat(schedule.delayAfter(3)).isEqualTo(Duration.ofSeconds(20));
    assertThat(schedule.delayAfter(4)).isEqualTo(Duration.ofSeconds(40));
    assertThat(schedule.delayAfter(5)).isEqualTo(Duration.ofMinutes(1));
    assertThat(schedule.delayAfter(Integer.MAX_VALUE)).isEqualTo(Duration.ofMinutes(1));
  }
}
