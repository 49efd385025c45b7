package dev.idemkit.conformance;

import dev.idemkit.client.internal.Json;
import dev.idemkit.conformance.CheckResult.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/** The report in three forms: readable text, JSON, and JUnit XML for CI dashboards. */
final class Reports {

  private Reports() {}

  static String line(CheckResult r) {
    return String.format(
        Locale.ROOT, "%-4s  %-28s %s%n      %s%n", r.status(), r.id(), r.rationale(), r.detail());
  }

  /**
   * The closing lines: every warning of the run (each also went to standard error before the
   * checks), then the counts.
   */
  static String summary(Options o, List<String> warnings, List<CheckResult> results) {
    StringBuilder warned = new StringBuilder();
    warnings.forEach(w -> warned.append("\nwarning: ").append(w).append('\n'));
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
    StringBuilder out = new StringBuilder();
    out.append("{\n  \"tool\": \"idemkit-conformance\",\n");
    out.append("  \"profile\": ").append(Json.quote(o.profile().name())).append(",\n");
    out.append("  \"endpoint\": ")
        .append(Json.quote(o.method() + " " + o.baseUrl() + o.path()))
        .append(",\n");
    out.append("  \"finishedAt\": ").append(Json.quote(Instant.now().toString())).append(",\n");
    out.append("  \"summary\": {");
    Status[] statuses = Status.values();
    for (int i = 0; i < statuses.length; i++) {
      out.append(i == 0 ? "" : ", ")
          .append(Json.quote(statuses[i].name().toLowerCase(Locale.ROOT)))
          .append(": ")
          .append(count(results, statuses[i]));
    }
    out.append("},\n  \"warnings\": [");
    for (int i = 0; i < warnings.size(); i++) {
      out.append(i == 0 ? "" : ", ").append(Json.quote(warnings.get(i)));
    }
    out.append("],\n  \"checks\": [\n");
    for (int i = 0; i < results.size(); i++) {
      CheckResult r = results.get(i);
      out.append("    {\"id\": ")
          .append(Json.quote(r.id()))
          .append(", \"status\": ")
          .append(Json.quote(r.status().name()))
          .append(", \"rationale\": ")
          .append(Json.quote(r.rationale()))
          .append(", \"detail\": ")
          .append(Json.quote(r.detail()))
          .append(", \"millis\": ")
          .append(r.millis())
          .append(i + 1 < results.size() ? "},\n" : "}\n");
    }
    out.append("  ]\n}\n");
    write(file, out.toString());
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
                .append(xml(r.detail()))
                .append("\" type=\"")
                .append(xml(r.id()))
                .append("\">")
                .append(xml(r.rationale() + "\n" + r.detail()))
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
