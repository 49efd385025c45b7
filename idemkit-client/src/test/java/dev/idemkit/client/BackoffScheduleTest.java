package dev.idemkit.client;

import static dev.idemkit.client.ScriptedServer.Reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's waits between attempts, read off an injected sleeper and clock: nothing here sleeps.
 */
class BackoffScheduleTest {

  private static final String PATH = "/v1/payments";

  private final ScriptedServer server = ScriptedServer.start();
  private final TestClock clock = new TestClock();

  @AfterEach
  void stop() {
    server.close();
  }

  private IdempotentClient client(RetryPolicy policy, double random) {
    return IdempotentClient.builder()
        .baseUri(server.uri())
        .retryPolicy(policy)
        .sleeper(clock.sleeper())
        .clock(clock)
        .random(() -> random)
        .build();
  }

  private static RetryPolicy.Builder policy() {
    return RetryPolicy.builder()
        .initialBackoff(Duration.ofMillis(100))
        .maxBackoff(Duration.ofMillis(300))
        .maxAttempts(8)
        .deadline(Duration.ofSeconds(60));
  }

  @Test
  void waitsFollowTheJitteredExponentialScheduleUpToItsCap() {
    server.on(
        PATH, Reply.of(503), Reply.of(503), Reply.of(503), Reply.of(503), Reply.created("{}"));
    IdempotentResponse r = client(policy().build(), 0.5).post(PATH).json("{}").send();

    assertThat(r.attempts()).isEqualTo(5);
    // random 0.5 of the ceilings 100, 200, 300 (capped), 300 ms.
    assertThat(clock.sleeps())
        .containsExactly(
            Duration.ofMillis(50),
            Duration.ofMillis(100),
            Duration.ofMillis(150),
            Duration.ofMillis(150));
    assertThat(server.keys(PATH)).hasSize(5).containsOnly(r.key());
  }

  @Test
  void retryAfterIsHonouredAsALowerBound() {
    server.on(
        PATH,
        Reply.problem(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "running").header("Retry-After", "2"),
        Reply.of(503).header("Retry-After", "0"),
        Reply.created("{}"));
    IdempotentResponse r = client(policy().build(), 1.0).post(PATH).json("{}").send();

    assertThat(r.attempts()).isEqualTo(3);
    assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(2), Duration.ofMillis(200));
  }

  @Test
  void noAttemptStartsAfterTheDeadline() {
    server.on(PATH, Reply.of(503));
    RetryPolicy p =
        policy()
            .initialBackoff(Duration.ofMillis(400))
            .maxBackoff(Duration.ofMillis(400))
            .deadline(Duration.ofSeconds(1))
            .maxAttempts(100)
            .build();

    assertThatThrownBy(() -> client(p, 1.0).post(PATH).json("{}").send())
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              // 0 ms, 400 ms, 800 ms; a fourth at 1200 ms would pass the deadline.
              assertThat(e.reason()).isEqualTo(RetriesExhaustedException.Reason.DEADLINE);
              assertThat(e.attempts()).isEqualTo(3);
              assertThat(e.status()).hasValue(503);
              assertThat(e.getMessage()).contains("deadline of 1 s", "same key");
            });
    assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(400), Duration.ofMillis(400));
    assertThat(server.keys(PATH))
        .hasSize(3)
        .doesNotContainNull()
        .containsOnly(server.keys(PATH).get(0));
  }

  @Test
  void aRetryAfterPastTheDeadlineStopsAtOnceInsteadOfRetryingEarly() {
    server.on(PATH, Reply.of(429).header("Retry-After", "30"));
    RetryPolicy p = policy().deadline(Duration.ofSeconds(10)).build();

    assertThatThrownBy(() -> client(p, 0.0).post(PATH).json("{}").send())
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(RetriesExhaustedException.Reason.DEADLINE);
              assertThat(e.attempts()).isEqualTo(1);
              assertThat(e.status()).hasValue(429);
              assertThat(e.getMessage()).contains("Retry-After 30 s");
            });
    assertThat(clock.sleeps()).isEmpty();
  }

  @Test
  void aRetryAfterOfManyDigitsStopsAtOnceInsteadOfBeingIgnored() {
    server.on(PATH, Reply.of(503).header("Retry-After", "10000000000"), Reply.created("{}"));

    assertThatThrownBy(() -> client(policy().build(), 1.0).post(PATH).json("{}").send())
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(RetriesExhaustedException.Reason.DEADLINE);
              assertThat(e.attempts()).isEqualTo(1);
              assertThat(e.status()).hasValue(503);
            });
    assertThat(clock.sleeps()).isEmpty();
    assertThat(server.attempts(PATH)).hasSize(1);
  }

  @Test
  void retryAfterInTheObsoleteHttpDateFormsIsHonoured() {
    // The test clock stands at 2030-01-01T00:00:00Z, a Tuesday.
    server.on(
        PATH,
        Reply.of(503).header("Retry-After", "Tuesday, 01-Jan-30 00:00:05 GMT"),
        Reply.of(503).header("Retry-After", "Tue Jan  1 00:00:12 2030"),
        Reply.created("{}"));

    IdempotentResponse r = client(policy().build(), 1.0).post(PATH).json("{}").send();

    assertThat(r.attempts()).isEqualTo(3);
    assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(5), Duration.ofSeconds(7));
    assertThat(server.keys(PATH)).hasSize(3).containsOnly(r.key());
  }

  @Test
  void stopsAfterMaxAttemptsWithTheLastAnswer() {
    server.on(PATH, Reply.problem(500, "INTERNAL", "boom").header("Retry-After", "0"));
    RetryPolicy p = policy().maxAttempts(3).build();

    assertThatThrownBy(() -> client(p, 0.0).post(PATH).json("{}").send())
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(RetriesExhaustedException.Reason.MAX_ATTEMPTS);
              assertThat(e.attempts()).isEqualTo(3);
              assertThat(e.status()).hasValue(500);
              assertThat(e.errorCode()).hasValue("INTERNAL");
              assertThat(e.detail()).hasValue("boom");
              assertThat(e.key()).hasValue(server.keys(PATH).get(0));
              // The final answer itself, headers and body, for the caller to act on.
              assertThat(e.lastResponse())
                  .hasValueSatisfying(
                      last -> {
                        assertThat(last.status()).isEqualTo(500);
                        assertThat(last.header("Retry-After")).hasValue("0");
                        assertThat(last.bodyAsString()).contains("\"detail\":\"boom\"");
                        assertThat(last.attempts()).isEqualTo(3);
                        assertThat(last.key()).isEqualTo(server.keys(PATH).get(0));
                      });
            });
    assertThat(clock.sleeps()).hasSize(2);
    assertThat(server.attempts(PATH)).hasSize(3);
  }
}
