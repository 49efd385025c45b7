package dev.idemkit.chaos;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
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
    line(s, "  nemesis: %s", nemesis(o.nemesis(), config.nemesisActions()));
    line(s, "  database: %s", config.database());
    line(s, "  server errors: %d answers with a 5xx other than 503", o.serverErrors().size());
    o.serverErrors().stream().limit(ANOMALIES_SHOWN).forEach(x -> line(s, "  ! %s", x));
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

  /** What each of {@link Nemesis#ACTIONS} does, as the summary and the progress lines say it. */
  private static final Map<String, String> DONE = new LinkedHashMap<>();

  static {
    DONE.put("kill", "kill -9");
    DONE.put("pause", "SIGSTOP/SIGCONT");
    DONE.put("terminate-connections", "pg_terminate_backend");
    DONE.put("stall-consumers", "consumer stalls");
    DONE.put("failover", "failovers");
    DONE.put("freeze-database", "database freezes");
    DONE.put("cut-network", "network cuts");
    DONE.put("skew-clocks", "clock skews");
    DONE.put("kill-during-shutdown", "kill -9 during shutdown");
    DONE.put("move-tenant", "tenant moves");
  }

  /**
   * What the nemesis did, as the summary and the progress lines say it: each fault it was given
   * ({@code actions}), then any other it did (a fault it could not do now is replaced by cutting
   * connections).
   */
  static String nemesis(Map<String, Integer> counts, List<String> actions) {
    StringJoiner said = new StringJoiner(", ");
    DONE.forEach(
        (action, done) -> {
          int n = counts.getOrDefault(action, 0);
          if (n > 0 || actions.contains(action)) {
            said.add(n + " " + done);
          }
        });
    return said.toString();
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
        .put("valid", o.valid())
        .put("conclusive", o.inconclusive().isEmpty())
        .putPOJO("anomalies", a.anomalies())
        .put("changedAnswers", a.changedAnswers())
        .put("database", config.database())
        .put("failovers", o.count("failover"))
        .putPOJO("nemesisActions", o.nemesis())
        .putPOJO("serverErrors", o.serverErrors());
    return Json.write(report) + System.lineSeparator();
  }

  private static void line(StringBuilder s, String format, Object... args) {
    s.append(String.format(Locale.ROOT, format, args)).append('\n');
  }

  private static String onOff(boolean on) {
    return on ? "on" : "off";
  }
}
