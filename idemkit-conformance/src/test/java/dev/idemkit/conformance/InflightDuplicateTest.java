package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.conformance.TransfersApi.Duplicate;
import dev.idemkit.conformance.UsageTest.Result;
import org.junit.jupiter.api.Test;

/**
 * {@code inflight.duplicate} against a transfers API whose first request is still running when the
 * duplicate arrives: a duplicate that waits and gets the replay, or gets the draft's 409, passes
 * whichever of the two answers reaches the checker first; a duplicate that runs again fails.
 */
class InflightDuplicateTest {

  private static Result check(TransfersApi api) {
    return UsageTest.run(
        "--base-url",
        api.baseUrl(),
        "--path",
        "/transfers",
        "--body",
        "{\"ref\":\"{{unique}}\",\"amount\":\"10.00\"}",
        "--auth",
        "Bearer tenant-a",
        "--effect-url",
        "/effects?ref={{unique}}",
        "--effect-count",
        "count",
        "--inflight-delay-ms",
        "100",
        "--only",
        "inflight.duplicate");
  }

  /**
   * The replay reaches the checker before the first request's own answer (the API does post-commit
   * work after waking the duplicate): the check judges the answers and the effect count, not which
   * connection the checker happened to read first.
   */
  @Test
  void aDuplicateThatWaitsAndGetsTheReplayPassesWhicheverAnswerArrivesFirst() throws Exception {
    try (TransfersApi api = new TransfersApi(Duplicate.WAITS_AND_REPLAYS)) {
      Result r = check(api);

      assertThat(r.exit()).as(r.out() + r.err()).isZero();
      assertThat(r.out())
          .contains("PASS  inflight.duplicate")
          .contains("second request: 201 {\"id\":\"tr_2\"")
          .contains("replayed");
    }
  }

  @Test
  void aDuplicateToldItIsInProgressPasses() throws Exception {
    try (TransfersApi api = new TransfersApi(Duplicate.IN_PROGRESS)) {
      Result r = check(api);

      assertThat(r.exit()).as(r.out() + r.err()).isZero();
      assertThat(r.out())
          .contains("PASS  inflight.duplicate")
          .contains("IDEMPOTENCY_REQUEST_IN_PROGRESS");
    }
  }

  @Test
  void aDuplicateThatRunsAgainFails() throws Exception {
    try (TransfersApi api = new TransfersApi(Duplicate.RUNS_AGAIN)) {
      Result r = check(api);

      assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
      assertThat(r.out())
          .contains("FAIL  inflight.duplicate")
          .contains("the operation ran a second time")
          .contains("2 effects for one key: the operation ran again (a duplicate)");
    }
  }
}
