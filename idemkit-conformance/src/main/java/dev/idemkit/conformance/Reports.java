package dev.idemkit.conformance;

import dev.idemkit.conformance.CheckResult.Breach;
import dev.idemkit.conformance.CheckResult.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The report in three forms: readable text, JSON, and JUnit XML for CI dashboards. */
final class Reports {

  private Reports() {}

  static String line(CheckResult r) {
    return String.format(
        Locale.ROOT, "%-4s  %-28s %s%n      %s%n", r.status(), r.id(), r.rationale(), detail(r));
  }

  /** A failure's detail says first what it breaks. */
  private static String detail(CheckResult r) {
    return r.status() == Status.FAIL ? r.breach().phrase() + ": " + r.detail() : r.detail();
  }

  /**
   * The closing lines: every warning of the run (each also went to standard error before the
   * checks), which failures violate the guarantee and which only differ from the profile, then the
   * counts.
   */
  static String summary(Options o, List<String> warnings, List<CheckResult> results) {
    StringBuilder warned = new StringBuilder();
    warnings.forEach(w -> warned.append("\nwarning: ").append(w).append('\n'));
    for (Breach breach : List.of(Breach.GUARANTEE, Breach.CONVENTION)) {
      List<String> ids =
          results.stream()
              .filter(r -> r.status() == Status.FAIL && r.breach() == breach)
              .map(CheckResult::id)
              .toList();
      if (!ids.isEmpty()) {
        warned
            .append('\n')
            .append(ids.size() == 1 ? "1 check " : ids.size() + " checks ")
            .append(
                breach == Breach.GUARANTEE
                    ? (ids.size() == 1 ? "violates" : "violate") + " the idempotency guarantee: "
                    : (ids.size() == 1 ? "differs" : "differ")
                        + " from the "
                        + o.profile().name()
                        + " profile's conventions: ")
            .append(String.join(", ", ids))
            .append('\n');
      }
    }
    return warned
        + String.format(
            Locale.ROOT,
            "%nidemkit-conformance: profile %s, %s %s%s: %d passed, %d failed, %d skipped, %d"
                + " reported%n",
            o.profile().name(),
            o.method(),
            o.baseUrl(),
            o.path(),
            count(results, Status.PASS),
            count(results, Status.FAIL),
            count(results, Status.SKIP),
            count(results, Status.INFO));
  }

  static long count(List<CheckResult> results, Status status) {
    return results.stream().filter(r -> r.status() == status).count();
  }

  static void writeJson(Path file, Options o, List<String> warnings, List<CheckResult> results)
      throws IOException {
    Map<String, Object> summary = new LinkedHashMap<>();
    for (Status status : Status.values()) {
      summary.put(status.name().toLowerCase(Locale.ROOT), count(results, status));
    }
    for (Breach breach : List.of(Breach.GUARANTEE, Breach.CONVENTION)) {
      summary.put(
          breach.name().toLowerCase(Locale.ROOT),
          results.stream().filter(r -> r.status() == Status.FAIL && r.breach() == breach).count());
    }
    List<Map<String, Object>> checks =
        results.stream()
            .map(
                r -> {
                  Map<String, Object> check = new LinkedHashMap<>();
                  check.put("id", r.id());
                  check.put("status", r.status().name());
                  if (r.status() == Status.FAIL) {
                    check.put("breach", r.breach().name().toLowerCase(Locale.ROOT));
                  }
                  check.put("rationale", r.rationale());
                  check.put("detail", r.detail());
                  check.put("millis", r.millis());
                  return check;
                })
            .toList();
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("tool", "idemkit-conformance");
    report.put("profile", o.profile().name());
    report.put("endpoint", o.method() + " " + o.baseUrl() + o.path());
    report.put("finishedAt", Instant.now().toString());
    report.put("summary", summary);
    report.put("warnings", warnings);
    report.put("checks", checks);
    write(file, JsonDocuments.MAPPER.writeValueAsString(report) + "\n");
  }

  /**
   * JUnit XML. CI dashboards show a failure's {@code message} and little else, so it carries what
   * the check found (its detail; the rationale and the detail are the failure's text). The run's
   * warnings (no effect URL, a body without {@code {{unique}}}, an ambiguous profile, …) are the
   * suite's {@code warning} properties and its {@code system-err}, where a consumer shows them.
   */
  static void writeJunit(Path file, Options o, List<String> warnings, List<CheckResult> results)
      throws IOException {
    String suite = "idemkit-conformance." + o.profile().name();
    long millis = results.stream().mapToLong(CheckResult::millis).sum();
    StringBuilder out = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.append(
        String.format(
            Locale.ROOT,
            "<testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">%n",
            xml(suite),
            results.size(),
            count(results, Status.FAIL),
            count(results, Status.SKIP),
            millis / 1000.0));
    if (!warnings.isEmpty()) {
      out.append("  <properties>\n");
      for (String w : warnings) {
        out.append("    <property name=\"warning\" value=\"").append(xml(w)).append("\"/>\n");
      }
      out.append("  </properties>\n");
    }
    for (CheckResult r : results) {
      out.append(
          String.format(
              Locale.ROOT,
              "  <testcase classname=\"%s\" name=\"%s\" time=\"%.3f\">%n",
              xml(suite),
              xml(r.id()),
              r.millis() / 1000.0));
      switch (r.status()) {
        case FAIL ->
            out.append("    <failure message=\"")
                .append(xml(detail(r)))
                .append("\" type=\"")
                .append(xml(r.id()))
                .append("\">")
                .append(xml(r.rationale() + "\n" + detail(r)))
                .append("</failure>\n");
        case SKIP -> out.append("    <skipped message=\"").append(xml(r.detail())).append("\"/>\n");
        default ->
            out.append("    <system-out>")
                .append(xml(r.status() + ": " + r.detail()))
                .append("</system-out>\n");
      }
      out.append("  </testcase>\n");
    }
    if (!warnings.isEmpty()) {
      out.append("  <system-err>");
      warnings.forEach(w -> out.append(xml("warning: " + w)).append('\n'));
      out.append("  </system-err>\n");
    }
    out.append("</testsuite>\n");
    write(file, out.toString());
  }

  private static String xml(String s) {
    StringBuilder out = new StringBuilder();
    for (char c : s.toCharArray()) {
      switch (c) {
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '&' -> out.append("&amp;");
        case '"' -> out.append("&quot;");
        default -> {
          if (c < 0x20 && c != '\n' && c != '\t') {
            out.append("\\x").append(String.format(Locale.ROOT, "%02x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.toString();
  }

  private static void write(Path file, String text) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, text, StandardCharsets.UTF_8);
  }
}
