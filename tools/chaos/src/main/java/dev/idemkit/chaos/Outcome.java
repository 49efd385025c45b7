package dev.idemkit.chaos;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/**
 * What a finished run found: the accounting's verdict, what the nemesis did (each of {@link
 * Nemesis#ACTIONS} with its count), the answers with a server error (a 5xx other than 503, {@link
 * Cluster#serverErrors}), what did not drain, and where the files are; with the {@code RESULT} line
 * scripts read and the exit status.
 */
record Outcome(
    Accounting.Result accounting,
    Map<String, Integer> nemesis,
    List<String> serverErrors,
    List<String> undrained,
    Path history,
    Path edn,
    Path report) {

  /**
   * The last line of the summary, {@code RESULT key=value ...}: the accounting's counts, the
   * ledger, the nemesis's actions, whether the run drained, holds and proves anything, then the
   * {@link #appended} counts.
   */
  String resultLine() {
    Map<String, Object> fields = new LinkedHashMap<>(counts());
    fields.put("ledger", ledgerConserved() ? "conserved" : "violated");
    fields.putAll(nemesisActions());
    fields.put("drained", undrained.isEmpty());
    fields.put("valid", valid());
    fields.put("conclusive", inconclusive().isEmpty());
    fields.putAll(appended());
    StringJoiner line = new StringJoiner(" ", "RESULT ", "");
    fields.forEach((name, value) -> line.add(name + "=" + value));
    return line.toString();
  }

  /** The accounting's counts by name, in the order the RESULT line and the report give them. */
  Map<String, Integer> counts() {
    Accounting.Result a = accounting;
    Map<String, Integer> counts = new LinkedHashMap<>();
    counts.put("operations", a.operations());
    counts.put("ok", a.ok());
    counts.put("fail", a.fail());
    counts.put("info", a.info());
    counts.put("lost", a.lost());
    counts.put("duplicated", a.duplicated());
    counts.put("unexpected", a.unexpected());
    counts.put("recovered", a.recovered());
    counts.put("unresolved", a.unresolved());
    counts.put("receipts", a.receipts());
    return counts;
  }

  /**
   * The counts added to the RESULT line and the report after their first fields, at their end, so
   * that scripts reading the earlier fields read them unchanged.
   */
  Map<String, Integer> appended() {
    Map<String, Integer> appended = new LinkedHashMap<>();
    appended.put("changed_answers", accounting.changedAnswers());
    appended.put("failovers", count("failover"));
    appended.put("freezes", count("freeze-database"));
    appended.put("network_cuts", count("cut-network"));
    appended.put("clock_skews", count("skew-clocks"));
    appended.put("shutdown_kills", count("kill-during-shutdown"));
    appended.put("server_errors", serverErrors.size());
    appended.put("tenant_moves", count("move-tenant"));
    return appended;
  }

  /** The first four of the nemesis's actions, by the names the RESULT line gives them. */
  Map<String, Integer> nemesisActions() {
    Map<String, Integer> actions = new LinkedHashMap<>();
    actions.put("kills", count("kill"));
    actions.put("pauses", count("pause"));
    actions.put("terminations", count("terminate-connections"));
    actions.put("stalls", count("stall-consumers"));
    return actions;
  }

  /** How many times the nemesis did {@code action}. */
  int count(String action) {
    return nemesis.getOrDefault(action, 0);
  }

  /** Whether the run holds: the accounting's verdict, and no server error answered. */
  boolean valid() {
    return accounting.valid() && serverErrors.isEmpty();
  }

  boolean ledgerConserved() {
    return accounting.ledger().violations().isEmpty();
  }

  /**
   * Why the run proves nothing, if it does not: no operation was acknowledged (nothing was lost or
   * duplicated only because nothing was done), or the drain did not finish (the effects counted are
   * not all there will be).
   */
  Optional<String> inconclusive() {
    Accounting.Result a = accounting;
    if (a.ok() == 0) {
      return Optional.of(
          "no operation was acknowledged ("
              + a.operations()
              + " operations: fail "
              + a.fail()
              + ", info "
              + a.info()
              + "); every request failed or timed out, so there was nothing to lose or duplicate");
    }
    if (!undrained.isEmpty()) {
      return Optional.of(
          "the drain did not finish within "
              + Drain.MAX.toSeconds()
              + " s (left: "
              + String.join(", ", undrained)
              + "), so effects still on their way (ledger entries, receipts, shipments) were not"
              + " counted");
    }
    return Optional.empty();
  }

  /**
   * The exit status, with a line on {@code err} when it is not 0: 1 when the accounting found an
   * anomaly (the line counts them); 2, with a line saying why, when the run is not conclusive
   * ({@link #inconclusive}); 0 otherwise.
   */
  int exitStatus(PrintStream err) {
    Accounting.Result a = accounting;
    if (a.valid() && !serverErrors.isEmpty()) {
      err.println(
          "chaos: the service answered "
              + serverErrors.size()
              + " requests with a server error (5xx other than 503; the first: "
              + serverErrors.get(0)
              + "); a fault must be answered 503 with Retry-After or time out (exit status 1)");
      return 1;
    }
    if (!a.valid()) {
      err.println(
          "chaos: the accounting failed: "
              + a.anomalies().size()
              + (a.anomalies().size() == 1 ? " anomaly" : " anomalies")
              + " (lost "
              + a.lost()
              + ", duplicated "
              + a.duplicated()
              + ", unexpected "
              + a.unexpected()
              + ", unresolved "
              + a.unresolved()
              + ", changed answers "
              + a.changedAnswers()
              + ", ledger "
              + (ledgerConserved() ? "conserved" : "violated")
              + "); the summary shows the first 20, the report under --out all of them"
              + " (exit status 1)");
      return 1;
    }
    Optional<String> why = inconclusive();
    if (why.isPresent()) {
      err.println(
          "chaos: the run proves nothing: "
              + why.get()
              + ". Look at the history and the services' logs under --out for why (exit status 2)");
      return 2;
    }
    return 0;
  }
}
