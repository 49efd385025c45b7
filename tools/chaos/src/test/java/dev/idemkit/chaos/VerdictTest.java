package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The exit status of a finished run: a run in which nothing was acknowledged has nothing lost or
 * duplicated only because nothing was done, and must not pass as proof.
 */
class VerdictTest {

  private static final Accounting.Ledger CONSERVED =
      new Accounting.Ledger("conserved: 0 entries", 0, List.of());

  private static Accounting.Result result(int ok, int fail, int info, int duplicated) {
    return new Accounting.Result(
        ok + fail + info,
        ok,
        fail,
        info,
        0,
        duplicated,
        0,
        0,
        0,
        0,
        CONSERVED,
        duplicated == 0 ? List.of() : List.of("op-1 duplicated"),
        Map.of(),
        0);
  }

  private static String[] status(Accounting.Result a) {
    return status(outcome(a));
  }

  private static String[] status(Outcome o) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = o.exitStatus(new PrintStream(err, true, StandardCharsets.UTF_8));
    return new String[] {Integer.toString(exit), err.toString(StandardCharsets.UTF_8)};
  }

  @Test
  void aRunWithNothingAcknowledgedIsNotASuccess() {
    String[] allFailed = status(result(0, 40, 3, 0));

    assertThat(allFailed[0]).isEqualTo("2");
    assertThat(allFailed[1])
        .contains("the run proves nothing: no operation was acknowledged")
        .contains("43 operations: fail 40, info 3");
    assertThat(status(result(0, 0, 0, 0))[0]).as("no operation at all").isEqualTo("2");
  }

  /** Exit status 1 came with no line on standard error; the inconclusive 2 had one. */
  @Test
  void aFailedAccountingSaysSoOnStandardError() {
    String[] duplicated = status(result(30, 2, 1, 1));

    assertThat(duplicated[0]).isEqualTo("1");
    assertThat(duplicated[1])
        .contains(
            "chaos: the accounting failed: 1 anomaly (lost 0, duplicated 1, unexpected 0,"
                + " unresolved 0, changed answers 0, ledger conserved)")
        .contains("(exit status 1)");
  }

  @Test
  void aRunThatHoldsSucceedsAndOneWithAnAnomalyFails() {
    assertThat(status(result(30, 2, 1, 0))).containsExactly("0", "");
    assertThat(status(result(30, 2, 1, 1))[0]).isEqualTo("1");
    // An anomaly is a finding even when nothing was acknowledged.
    assertThat(status(result(0, 5, 0, 1))[0]).isEqualTo("1");
  }

  /** The RESULT line, which scripts read, says so too: valid=true alone passed for proof. */
  @Test
  void theResultLineSaysWhetherTheRunIsConclusive() {
    assertThat(outcome(result(0, 40, 3, 0)).resultLine())
        .startsWith("RESULT operations=43 ok=0 fail=40 info=3 ")
        .endsWith(
            " valid=true conclusive=false changed_answers=0 failovers=0 freezes=0"
                + " network_cuts=0 clock_skews=0 shutdown_kills=0 server_errors=0 tenant_moves=0");
    assertThat(outcome(result(30, 2, 1, 0)).resultLine())
        .endsWith(
            " valid=true conclusive=true changed_answers=0 failovers=0 freezes=0"
                + " network_cuts=0 clock_skews=0 shutdown_kills=0 server_errors=0 tenant_moves=0");
  }

  /**
   * A run whose drain did not finish exited 0 when what had been counted held: the ledger entries,
   * receipts and shipments still on their way were never checked.
   */
  @Test
  void aRunWhoseDrainDidNotFinishIsInconclusive() {
    Outcome undrained = outcome(result(30, 2, 1, 0), List.of("outbox unsent 12"));

    String[] status = status(undrained);

    assertThat(status[0]).isEqualTo("2");
    assertThat(status[1])
        .contains("the drain did not finish within 60 s (left: outbox unsent 12)")
        .contains("(exit status 2)");
    assertThat(undrained.resultLine())
        .endsWith(
            " drained=false valid=true conclusive=false changed_answers=0 failovers=0 freezes=0"
                + " network_cuts=0 clock_skews=0 shutdown_kills=0 server_errors=0 tenant_moves=0");
    // An anomaly found in what was counted is still a finding.
    assertThat(status(outcome(result(30, 2, 1, 1), List.of("outbox unsent 12")))[0]).isEqualTo("1");
  }

  /**
   * A fault must be answered 503 with Retry-After or time out: a 500 fails a run whose accounting
   * holds, and says which answer it was.
   */
  @Test
  void aServerErrorFailsARunWhoseAccountingHolds() {
    Outcome withError =
        outcome(
            result(30, 2, 1, 0),
            List.of(),
            List.of("service-a-t-access.log: 2026-12-06T01:00:00.000 500 POST /v1/payments 12ms"));

    String[] status = status(withError);

    assertThat(status[0]).isEqualTo("1");
    assertThat(status[1])
        .contains("answered 1 requests with a server error")
        .contains("500 POST /v1/payments")
        .contains("(exit status 1)");
    assertThat(withError.resultLine())
        .contains(" valid=false ")
        .endsWith(" server_errors=1 tenant_moves=0");
  }

  private static Outcome outcome(Accounting.Result a) {
    return outcome(a, List.of());
  }

  private static Outcome outcome(Accounting.Result a, List<String> undrained) {
    return outcome(a, undrained, List.of());
  }

  private static Outcome outcome(
      Accounting.Result a, List<String> undrained, List<String> serverErrors) {
    return new Outcome(
        a,
        Map.of(),
        serverErrors,
        undrained,
        Path.of("h.jsonl"),
        Path.of("h.edn"),
        Path.of("r.json"));
  }
}
