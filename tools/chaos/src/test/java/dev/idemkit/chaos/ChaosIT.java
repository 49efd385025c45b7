package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The bounded chaos run: under kill -9, SIGSTOP/SIGCONT, terminated database connections, stalled
 * consumers, a faulty provider, a faulty mail service and the service's event fault injection,
 * nothing is lost, duplicated or unexpected, every completed payment's receipt is delivered once,
 * and the ledger is conserved; and the same checker, on a service running a deliberately broken
 * (find-then-insert) store, reports duplicates, and on one that lets a late owner write over a
 * finished record, changed answers. {@code -Didemkit.chaos.duration=PT10M} makes the first run
 * longer (see docs/proof.md).
 */
class ChaosIT {

  private static Cluster cluster;
  private static Path out;

  @BeforeAll
  static void start() throws Exception {
    out = Path.of(System.getProperty("idemkit.chaos.out", "target/chaos"));
    cluster = new Cluster(serviceJar(), out.resolve("logs"), ChaosRun.FAULTS);
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void underFaultsNothingIsLostDuplicatedOrUnexpected() throws Exception {
    Duration duration = Duration.parse(System.getProperty("idemkit.chaos.duration", "PT45S"));

    Outcome outcome =
        ChaosRun.run(cluster, ChaosRun.Config.defaults(serviceJar(), out).withDuration(duration));

    Accounting.Result a = outcome.accounting();
    assertThat(a.anomalies()).isEmpty();
    assertThat(a.lost()).isZero();
    assertThat(a.duplicated()).isZero();
    assertThat(a.unexpected()).isZero();
    assertThat(a.unresolved()).isZero();
    // Every stored answer, asked for again after the run, is the one the client was told.
    assertThat(a.changedAnswers()).isZero();
    // Every completed payment booked once as a debit and a credit of its amount.
    assertThat(a.ledger().violations()).isEmpty();
    assertThat(a.ledger().entries()).as("the ledger booked payments").isGreaterThan(0);
    // Every completed payment's receipt: one row, one mail at the shared simulator.
    assertThat(a.receipts()).as("receipts delivered once").isGreaterThan(0);
    assertThat(outcome.undrained()).as("the event flow drained").isEmpty();
    assertThat(a.valid()).isTrue();
    assertThat(a.ok()).as("work got done").isGreaterThan(20);
    assertThat(outcome.serverErrors()).as("answers 5xx other than 503").isEmpty();
    assertThat(
            outcome.count("pause") + outcome.count("terminate-connections") + outcome.count("kill"))
        .as("the nemesis acted")
        .isGreaterThanOrEqualTo(2);
    assertThat(Files.readAllLines(outcome.history()))
        .anyMatch(l -> l.contains("\"type\":\"invoke\""))
        .anyMatch(l -> l.contains("\"type\":\"ok\""));
  }

  @Test
  void aFindThenInsertStoreIsReportedAsDuplicates() throws Exception {
    // Clients that give up on an attempt after 150 ms retry while the first attempt is still in
    // the broken store's gap between its look-up and its insert.
    Outcome outcome = runBroken("find-then-insert", Duration.ofMillis(150));

    assertThat(outcome.accounting().duplicated()).isGreaterThan(0);
    assertThat(outcome.accounting().valid()).isFalse();
  }

  /**
   * A store that lets a late owner take over a finished record runs the operation again and writes
   * its answer over the stored one: nothing is charged twice (the payment meets its business key),
   * but asked again, the key answers {@code 409 PAYMENT_ALREADY_EXISTS} where the client was told
   * {@code 201}, and the answer check fails the run.
   */
  @Test
  void aLateOwnerWritingOverFinishedRecordsIsReportedAsChangedAnswers() throws Exception {
    Outcome outcome = runBroken("late-owner-overwrites", Duration.ofSeconds(3));

    Accounting.Result a = outcome.accounting();
    assertThat(a.changedAnswers()).isGreaterThan(0);
    assertThat(a.anomalies()).anyMatch(x -> x.startsWith("changed answer op-"));
    assertThat(a.valid()).isFalse();
    assertThat(outcome.resultLine())
        .contains(" valid=false ")
        .contains(" changed_answers=" + a.changedAnswers());
  }

  /** 20 s on the deliberately broken store {@code variant}, nemesis off. */
  private static Outcome runBroken(String variant, Duration requestTimeout) throws Exception {
    return ChaosRun.run(
        cluster,
        ChaosRun.Config.defaults(serviceJar(), out)
            .withDuration(Duration.ofSeconds(20))
            .withNemesis(false)
            .withBrokenStore(variant, requestTimeout));
  }

  static Path serviceJar() {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path", ""));
    for (String entry : classpath.split(File.pathSeparator)) {
      Path p = Path.of(entry);
      String name = p.getFileName() == null ? "" : p.getFileName().toString();
      if (name.startsWith("payments-service") && name.endsWith(".jar") && Files.isRegularFile(p)) {
        return p;
      }
    }
    Path fallback = Path.of(System.getProperty("idemkit.payments-service.jar", ""));
    assertThat(fallback).as("the packaged payments service").isRegularFile();
    return fallback;
  }
}
