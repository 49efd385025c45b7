package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The summary, the {@code RESULT} line and the JSON report read exactly as docs/proof.md shows them
 * for its smallest real run: scripts read the {@code RESULT} line and the report's fields.
 */
class ReportTest {

  private static final String LEDGER =
      "conserved: 192 entries; debits = credits per tenant and currency (tenant_demo_a EUR"
          + " 4367.00); every account and completed payment booked exactly once";

  private static final ChaosRun.Config CONFIG =
      ChaosRun.Config.defaults(Path.of("service.jar"), Path.of("out"))
          .withDuration(Duration.ofSeconds(15))
          .withNemesis(false);

  private static Outcome outcome(List<String> anomalies, List<String> undrained) {
    Accounting.Result a =
        new Accounting.Result(
            137,
            132,
            5,
            0,
            0,
            0,
            0,
            0,
            0,
            96,
            new Accounting.Ledger(LEDGER, 192, List.of()),
            anomalies,
            Map.of(),
            0);
    return new Outcome(
        a,
        Map.of(),
        List.of(),
        undrained,
        Path.of("/tmp/out/history-t.jsonl"),
        Path.of("/tmp/out/history-t.edn"),
        Path.of("/tmp/out/report-t.json"));
  }

  @Test
  void theSummaryEndsWithTheResultLine() {
    assertThat(Report.summary(CONFIG, outcome(List.of(), List.of())))
        .isEqualTo(
            """

            chaos run (PT15S, 8 clients, nemesis off)
              operations 137: ok 132, fail 5, info 0
              lost 0, duplicated 0, unexpected 0, recovered 0, unresolved 0
              receipts: 96 completed payments with one receipt row and one mail delivered
              answers: 0 changed (each stored answer asked for again after the drain)
              nemesis: 0 kill -9, 0 SIGSTOP/SIGCONT, 0 pg_terminate_backend, 0 consumer stalls
              database: single
              server errors: 0 answers with a 5xx other than 503
              faults: provider {LATENCY=0.2, ERROR_BEFORE_CHARGE=0.05, DECLINE=0.05, \
            DROP_AFTER_CHARGE=0.05, TIMEOUT_AFTER_CHARGE=0.05}; mail simulator \
            drop-after-accept:0.05,unavailable:0.05; events lost-ack 0.05, consumer-failure 0.05
              drained: yes
              ledger: %s
              history: /tmp/out/history-t.jsonl
              history for Jepsen: /tmp/out/history-t.edn
              report: /tmp/out/report-t.json
            RESULT operations=137 ok=132 fail=5 info=0 lost=0 duplicated=0 unexpected=0 \
            recovered=0 unresolved=0 receipts=96 ledger=conserved kills=0 pauses=0 terminations=0 \
            stalls=0 drained=true valid=true conclusive=true changed_answers=0 failovers=0 freezes=0 \
            network_cuts=0 clock_skews=0 shutdown_kills=0 server_errors=0 tenant_moves=0"""
                .formatted(LEDGER));
  }

  @Test
  void theJsonReportIsOneLineWithItsFieldsInOrder() {
    assertThat(Report.json(CONFIG, outcome(List.of(), List.of())))
        .isEqualTo(
            """
            {"duration":"PT15S","clients":8,"nemesis":false,"brokenStore":null,"operations":137,\
            "ok":132,"fail":5,"info":0,"lost":0,"duplicated":0,"unexpected":0,"recovered":0,\
            "unresolved":0,"receipts":96,"kills":0,"pauses":0,"terminations":0,"stalls":0,\
            "faults":"provider {LATENCY=0.2, ERROR_BEFORE_CHARGE=0.05, DECLINE=0.05, \
            DROP_AFTER_CHARGE=0.05, TIMEOUT_AFTER_CHARGE=0.05}; mail simulator \
            drop-after-accept:0.05,unavailable:0.05; events lost-ack 0.05, consumer-failure 0.05",\
            "undrained":[],"ledger":"%s","valid":true,"conclusive":true,"anomalies":[],\
            "changedAnswers":0,"database":"single","failovers":0,"nemesisActions":{},\
            "serverErrors":[]}
            """
                .formatted(LEDGER));
  }

  @Test
  void anomaliesAndWhatDidNotDrainAreListedAndQuoted() {
    Outcome o = outcome(List.of("lost op-1: \"acknowledged\", no effect"), List.of("3 outbox"));
    ChaosRun.Config broken = CONFIG.withBrokenStore("late-owner-overwrites", Duration.ofSeconds(3));

    assertThat(Report.json(broken, o))
        .contains("\"brokenStore\":\"late-owner-overwrites\"")
        .contains("\"undrained\":[\"3 outbox\"]")
        .contains("\"conclusive\":false")
        .contains("\"anomalies\":[\"lost op-1: \\\"acknowledged\\\", no effect\"]");
    assertThat(Report.summary(broken, o))
        .contains(
            "chaos run (PT15S, 8 clients, nemesis off, DELIBERATELY BROKEN store late-owner-overwrites)")
        .contains("  drained: NO, left: 3 outbox\n")
        .contains("  ! lost op-1: \"acknowledged\", no effect\n")
        .contains("  ! INCONCLUSIVE: the drain did not finish within 60 s (left: 3 outbox)");
  }
}
