package dev.idemkit.conformance;

import dev.idemkit.conformance.CheckResult.Status;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code java -jar idemkit-conformance.jar}: checks one endpoint's {@code Idempotency-Key}
 * behaviour against a profile and exits non-zero if any check failed. See {@link Options#usage()}.
 */
public final class ConformanceMain {

  private ConformanceMain() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs the checker; returns the exit status: 0 no check failed, 1 a check failed (with {@code
   * --fail-on guarantee}: one violated the idempotency guarantee), 2 nothing (or not everything)
   * could be judged: a usage error, an API that takes no connection, an effect URL that does not
   * count, a report that could not be written.
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    Options options;
    try {
      options = Options.parse(args);
      Checker.requireKnown(options.only());
    } catch (Options.HelpRequested help) {
      out.print(Options.usage());
      return 0;
    } catch (Exception e) {
      if (e.getMessage() != null && !e.getMessage().isEmpty()) {
        err.println("idemkit-conformance: " + e.getMessage());
      }
      err.print(Options.usage());
      return 2;
    }
    Options.authNote("--auth", options.auth())
        .ifPresent(note -> err.println("idemkit-conformance: note: " + note));
    Options.authNote("--auth2", options.auth2())
        .ifPresent(note -> err.println("idemkit-conformance: note: " + note));
    List<String> warnings = new ArrayList<>();
    if (!options.body().contains("{{unique}}")) {
      warnings.add(
          "--body has no {{unique}}: every check sends the same request, so a server that refuses"
              + " duplicates by a business key will fail checks for that, not for its "
              + options.profile().keyHeader()
              + " handling");
    }
    options
        .profile()
        .ambiguity()
        .ifPresent(
            why ->
                warnings.add(
                    why
                        + ": the race checks will say inconclusive where they see one; set"
                        + " in-progress-code or mismatch-code in the profile file"));
    Checker.effectWarning(options).ifPresent(warnings::add);
    warnings.forEach(w -> err.println("idemkit-conformance: warning: " + w));
    Checker checker = new Checker(options);
    try {
      checker.preflight();
    } catch (Endpoint.ConfigurationError e) {
      err.println("idemkit-conformance: " + e.getMessage());
      err.println("idemkit-conformance: no check ran (exit status 2)");
      return 2;
    }
    Optional<String> keyForm = checker.keyFormFinding();
    if (keyForm.isPresent()) {
      if (options.only().isEmpty() || options.only().contains("key.form")) {
        err.println("idemkit-conformance: key.form: " + keyForm.get() + " (reported as key.form)");
      } else {
        // Not a verdict the run was asked for, but the checks it was asked for send another form
        // than the profile's: the report must say why.
        String warning = "key.form (not selected by --only, so no verdict): " + keyForm.get();
        warnings.add(warning);
        err.println("idemkit-conformance: warning: " + warning);
      }
    }
    out.printf(
        "idemkit-conformance: profile %s against %s %s%s%n%n",
        options.profile().name(), options.method(), options.baseUrl(), options.path());
    List<CheckResult> results;
    try {
      results =
          checker.runAll(
              r -> {
                out.print(Reports.line(r));
                out.flush();
              });
    } catch (Endpoint.ConfigurationError e) {
      err.println("idemkit-conformance: " + e.getMessage());
      err.println(
          "idemkit-conformance: the verdicts above stand; the rest were not judged and no report"
              + " was written (exit status 2)");
      return 2;
    }
    out.print(Reports.summary(options, warnings, results));
    try {
      if (options.jsonReport() != null) {
        Reports.writeJson(options.jsonReport(), options, warnings, results);
        out.println("JSON report: " + options.jsonReport());
      }
      if (options.junitReport() != null) {
        Reports.writeJunit(options.junitReport(), options, warnings, results);
        out.println("JUnit report: " + options.junitReport());
      }
    } catch (Exception e) {
      err.println("idemkit-conformance: could not write a report: " + e);
      return 2;
    }
    boolean failed =
        options.failOn() == Options.FailOn.GUARANTEE
            ? results.stream().anyMatch(CheckResult::violatesGuarantee)
            : Reports.count(results, Status.FAIL) > 0;
    return failed ? 1 : 0;
  }
}
