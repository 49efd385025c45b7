package dev.idemkit.chaos;

import java.util.Locale;
import tools.jackson.databind.node.ObjectNode;

/**
 * A finished run for its readers: the summary on standard output (ending with the {@code RESULT}
 * line) and the JSON report file, both from the run's {@link ChaosRun.Config} and {@link Outcome}.
 */
final class Report {

  /** How many anomalies the summary lists; the JSON report has all of them. */
  static final int ANOMALIES_SHOWN = 20;

  private Report() {}

  /** The summary, the files written, and the {@code RESULT} line. */
  static String summary(ChaosRun.Config config, Outcome o) {
    Accounting.Result a = o.accounting();
    StringBuilder s = new StringBuilder();
    line(
        s,
        "%nchaos run (%s, %d clients, nemesis %s%s)",
        config.duration(),
        config.clients(),
        onOff(config.nemesis()),
        config.brokenStore() == null ? "" : ", DELIBERATELY BROKEN store " + config.brokenStore());
    line(s, "  operations %d: ok %d, fail %d, info %d", a.operations(), a.ok(), a.fail(), a.info());
    line(
        s,
        "  lost %d, duplicated %d, unexpected %d, recovered %d, unresolved %d",
        a.lost(),
        a.duplicated(),
        a.unexpected(),
        a.recovered(),
        a.unresolved());
    line(
        s,
        "  receipts: %d completed payments with one receipt row and one mail delivered",
        a.receipts());
    line(
        s,
        "  answers: %d changed (each stored answer asked for again after the drain)",
        a.changedAnswers());
    line(s, "  nemesis: %s", nemesis(o.kills(), o.pauses(), o.terminations(), o.stalls()));
    if (config.replication().isPresent()) {
      line(
          s,
          "  database: %s, %d failovers (kill -9 of the primary, the standby promoted)",
          config.database(),
          o.failovers());
    }
    line(s, "  faults: %s", ChaosRun.FAULT_SUMMARY);
    line(
        s,
        "  drained: %s",
        o.undrained().isEmpty() ? "yes" : "NO, left: " + String.join(", ", o.undrained()));
    line(s, "  ledger: %s", a.ledger().summary());
    a.anomalies().stream().limit(ANOMALIES_SHOWN).forEach(x -> line(s, "  ! %s", x));
    o.inconclusive().ifPresent(why -> line(s, "  ! INCONCLUSIVE: %s", why));
    line(s, "  history: %s", o.history());
    line(s, "  history for Jepsen: %s", o.edn());
    line(s, "  report: %s", o.report());
    return s.append(o.resultLine()).toString();
  }

  /** What the nemesis did, as the summary and the progress lines say it. */
  static String nemesis(int kills, int pauses, int terminations, int stalls) {
    return String.format(
        Locale.ROOT,
        "%d kill -9, %d SIGSTOP/SIGCONT, %d pg_terminate_backend, %d consumer stalls",
        kills,
        pauses,
        terminations,
        stalls);
  }

  /** The JSON report, one object on one line: the run's settings, counts, faults and anomalies. */
  static String json(ChaosRun.Config config, Outcome o) {
    Accounting.Result a = o.accounting();
    ObjectNode report =
        Json.MAPPER
            .createObjectNode()
            .put("duration", config.duration().toString())
            .put("clients", config.clients())
            .put("nemesis", config.nemesis())
            .put("brokenStore", config.brokenStore());
    o.counts().forEach(report::put);
    o.nemesisActions().forEach(report::put);
    report
        .put("faults", ChaosRun.FAULT_SUMMARY)
        .putPOJO("undrained", o.undrained())
        .put("ledger", a.ledger().summary())
        .put("valid", a.valid())
        .put("conclusive", o.inconclusive().isEmpty())
        .putPOJO("anomalies", a.anomalies())
        .put("changedAnswers", a.changedAnswers())
        .put("database", config.database())
        .put("failovers", o.failovers());
    return Json.write(report) + System.lineSeparator();
  }

  private static void line(StringBuilder s, String format, Object... args) {
    s.append(String.format(Locale.ROOT, format, args)).append('\n');
  }

  private static String onOff(boolean on) {
    return on ? "on" : "off";
  }
}
