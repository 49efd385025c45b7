package dev.idemkit.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The backoff schedule as a pure function: exponential ceilings, full jitter, Retry-After. */
class RetryPolicyTest {

  private final RetryPolicy policy =
      RetryPolicy.builder()
          .initialBackoff(Duration.ofMillis(100))
          .maxBackoff(Duration.ofSeconds(1))
          .build();

  @Test
  void defaults() {
    RetryPolicy d = RetryPolicy.defaults();
    assertThat(d.maxAttempts()).isEqualTo(8);
    assertThat(d.initialBackoff()).isEqualTo(Duration.ofMillis(100));
    assertThat(d.maxBackoff()).isEqualTo(Duration.ofSeconds(10));
    assertThat(d.deadline()).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void ceilingsDoubleUpToTheMaximum() {
    assertThat(policy.backoffCeiling(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(policy.backoffCeiling(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(policy.backoffCeiling(3)).isEqualTo(Duration.ofMillis(400));
    assertThat(policy.backoffCeiling(4)).isEqualTo(Duration.ofMillis(800));
    assertThat(policy.backoffCeiling(5)).isEqualTo(Duration.ofSeconds(1));
    assertThat(policy.backoffCeiling(63)).isEqualTo(Duration.ofSeconds(1));
    assertThat(policy.backoffCeiling(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(1));
    assertThatThrownBy(() -> policy.backoffCeiling(0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void fullJitterSpansZeroToTheCeiling() {
    assertThat(policy.backoff(3, 0.0)).isEqualTo(Duration.ZERO);
    assertThat(policy.backoff(3, 0.5)).isEqualTo(Duration.ofMillis(200));
    assertThat(policy.backoff(3, 1.0)).isEqualTo(Duration.ofMillis(400));
    assertThatThrownBy(() -> policy.backoff(1, 1.5)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> policy.backoff(1, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);

    Random random = new Random(42);
    Duration min = Duration.ofDays(1);
    Duration max = Duration.ZERO;
    for (int i = 0; i < 2000; i++) {
      Duration wait = policy.backoff(4, random.nextDouble());
      assertThat(wait).isBetween(Duration.ZERO, Duration.ofMillis(800));
      min = wait.compareTo(min) < 0 ? wait : min;
      max = wait.compareTo(max) > 0 ? wait : max;
    }
    // Full jitter, not "half fixed, half random": waits reach near zero and near the ceiling.
    assertThat(min).isLessThan(Duration.ofMillis(20));
    assertThat(max).isGreaterThan(Duration.ofMillis(780));
  }

  @Test
  void retryAfterIsALowerBound() {
    assertThat(policy.waitBefore(1, Optional.of(Duration.ofSeconds(2)), 0.3))
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(policy.waitBefore(4, Optional.of(Duration.ofMillis(100)), 1.0))
        .isEqualTo(Duration.ofMillis(800));
    assertThat(policy.waitBefore(4, Optional.empty(), 0.25)).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void readsRetryAfterInBothForms() {
    Instant now = Instant.parse("2030-01-01T00:00:00Z");
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of("3"), now))
        .hasValue(Duration.ofSeconds(3));
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of(" 0 "), now)).hasValue(Duration.ZERO);
    String in5s =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(5).atOffset(ZoneOffset.UTC));
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of(in5s), now))
        .hasValue(Duration.ofSeconds(5));
    String past =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(now.minusSeconds(5).atOffset(ZoneOffset.UTC));
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of(past), now)).hasValue(Duration.ZERO);
    // RFC 9110 §5.6.7: the obsolete RFC 850 and asctime forms must be accepted too.
    assertThat(
            DefaultIdempotentClient.retryAfter(Optional.of("Tuesday, 01-Jan-30 00:00:05 GMT"), now))
        .hasValue(Duration.ofSeconds(5));
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of("Tue Jan  1 00:00:07 2030"), now))
        .hasValue(Duration.ofSeconds(7));
    // A delay too long for nine digits still means "not before then", never "whenever".
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of("86400000000"), now))
        .hasValue(Duration.ofSeconds(86_400_000_000L));
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of("9".repeat(40)), now))
        .hasValueSatisfying(d -> assertThat(d).isGreaterThan(Duration.ofDays(365 * 1000)));
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of("-1"), now)).isEmpty();
    assertThat(DefaultIdempotentClient.retryAfter(Optional.of("soon"), now)).isEmpty();
    assertThat(DefaultIdempotentClient.retryAfter(Optional.empty(), now)).isEmpty();
  }

  @Test
  void builderRefusesNonsense() {
    assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryPolicy.builder().initialBackoff(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryPolicy.builder().deadline(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                RetryPolicy.builder()
                    .initialBackoff(Duration.ofSeconds(2))
                    .maxBackoff(Duration.ofSeconds(1))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("shorter than initialBackoff");
  }
}
