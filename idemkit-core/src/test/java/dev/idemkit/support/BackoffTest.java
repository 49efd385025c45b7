package dev.idemkit.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class BackoffTest {

  private final Backoff backoff =
      Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(10));

  @Test
  void doublesFromTheInitialDelayUpToTheCap() {
    assertThat(backoff.delay(1)).isEqualTo(Duration.ofSeconds(1));
    assertThat(backoff.delay(2)).isEqualTo(Duration.ofSeconds(2));
    assertThat(backoff.delay(3)).isEqualTo(Duration.ofSeconds(4));
    assertThat(backoff.delay(4)).isEqualTo(Duration.ofSeconds(8));
    assertThat(backoff.delay(5)).isEqualTo(Duration.ofSeconds(10));
    assertThat(backoff.delay(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void countsNoFailureAsTheFirst() {
    assertThat(backoff.delay(0)).isEqualTo(Duration.ofSeconds(1));
    assertThat(backoff.delay(-3)).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void aCapBelowTheInitialDelayWins() {
    assertThat(Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(2)).delay(1))
        .isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void jitterDrawsBetweenTheFractionBelowTheDelayAndTheDelay() {
    RandomGenerator lowest = () -> 0L; // nextDouble() == 0: the whole delay
    RandomGenerator half = () -> Long.MIN_VALUE; // nextDouble() == 0.5
    assertThat(backoff.withJitter(0.5, lowest).delay(3)).isEqualTo(Duration.ofSeconds(4));
    assertThat(backoff.withJitter(0.5, half).delay(3)).isEqualTo(Duration.ofSeconds(3));
    assertThat(backoff.withJitter(1, half).delay(5)).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void refusesAJitterOutsideZeroToOne() {
    assertThatThrownBy(() -> backoff.withJitter(1.5, () -> 0L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1.5");
    assertThatThrownBy(() -> backoff.withJitter(Double.NaN, () -> 0L))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
