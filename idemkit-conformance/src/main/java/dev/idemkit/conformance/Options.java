package dev.idemkit.conformance;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

/**
 * The checker's input, from the command line (parsed by picocli, which also prints {@code --help};
 * the values are checked here, each error naming its option). Templates may use {@code {{unique}}}:
 * each check puts a fresh value there, so that its operations are new to the server and its effects
 * can be counted.
 */
record Options(
    URI baseUrl,
    String method,
    String path,
    String body,
    String contentType,
    String mismatchBody,
    String otherPath,
    String invalidBody,
    String errorBody,
    List<Map.Entry<String, String>> errorHeaders,
    Map.Entry<String, String> auth,
    Map.Entry<String, String> auth2,
    List<Map.Entry<String, String>> headers,
    String effectUrl,
    String effectCount,
    Profile profile,
    int concurrency,
    Duration inflightDelay,
    Duration timeout,
    Path jsonReport,
    Path junitReport,
    Set<String> only,
    FailOn failOn) {

  /** The longest {@code --timeout-s}. */
  static final Duration MAX_TIMEOUT = Duration.ofHours(1);

  /** The most requests the race checks release together. */
  static final int MAX_CONCURRENCY = 256;

  /** What makes the exit status 1: any failed check, or only one that breaks the guarantee. */
  enum FailOn {
    ANY,
    GUARANTEE
  }

  /** The options as picocli reads them; {@link #parse} checks and converts them. */
  @Command(
      name = "java -jar idemkit-conformance.jar",
      customSynopsis =
          "java -jar idemkit-conformance.jar --base-url URL --path PATH --body JSON [options]",
      synopsisHeading = "Usage: ",
      optionListHeading = "%n",
      separator = " ",
      sortOptions = false,
      usageHelpWidth = 100,
      footerHeading = "%n",
      footer = {
        "A profile file (Java properties) may set: base (ietf or stripe), name, key-header (the",
        "header that carries the key, Idempotency-Key unless the API names another),",
        "require-key, missing-key-status, malformed-status, key-form (sf-string or bare),",
        "max-key-length, mismatch-status, in-progress-status, in-progress-problem (true: the",
        "in-progress answer is application/problem+json or has a Link rel=describedby),",
        "in-progress-code and mismatch-code (PATH=VALUE in the answer's JSON, e.g.",
        "error.code=idempotency_key_in_use), replay-header, retry-after-required,",
        "validation-errors-stored, refusals-replayed (true in ietf and stripe: a refusal such as",
        "a decline is replayed to a retry with its key; running it again is a duplicate); any",
        "other name is a usage error.",
        "",
        "A failed check either violates the idempotency guarantee (an effect lost or duplicated,",
        "one key answered differently) or differs from the profile's conventions (a status, an",
        "error code, a marker); the report says which.",
        "",
        "Exit status: 0 when no check failed (with --fail-on guarantee: none violated the",
        "guarantee), 1 when one did, 2 when the checks could not be judged as asked: a usage",
        "error, a --base-url that takes no connection, an --effect-url that does not answer a",
        "count (asked before any check; if it stops later, the run stops there), or a report",
        "that could not be written."
      })
  static final class CommandLineOptions {
    @Option(
        names = "--base-url",
        paramLabel = "URL",
        description = "the API, e.g. http://localhost:8080")
    String baseUrl;

    @Option(
        names = "--method",
        paramLabel = "M",
        description = "the idempotent endpoint's method (POST)")
    String method = "POST";

    @Option(
        names = "--path",
        paramLabel = "T",
        description = "its path template, e.g. /v1/payments")
    String path;

    @Option(
        names = "--body",
        paramLabel = "T",
        description = "a valid request body; {{unique}} is replaced per check")
    String body;

    @Option(names = "--content-type", paramLabel = "V", description = "(application/json)")
    String contentType = "application/json";

    @Option(
        names = "--mismatch-body",
        paramLabel = "T",
        description = "a different valid request (same {{unique}}), for the mismatch checks")
    String mismatchBody;

    @Option(
        names = "--other-path",
        paramLabel = "T",
        description = "another endpoint, for the same key with the same body elsewhere")
    String otherPath;

    @Option(
        names = "--invalid-body",
        paramLabel = "T",
        description = "a body the server refuses by validation")
    String invalidBody;

    @Option(
        names = "--error-body",
        paramLabel = "T",
        description = "a request that ends in an error answer (e.g. a decline)")
    String errorBody;

    @Option(
        names = "--error-header",
        paramLabel = "'N: V'",
        description = "a header that makes the request end in an error (repeatable)")
    List<String> errorHeaders = new ArrayList<>();

    @Option(
        names = "--auth",
        paramLabel = "V",
        description =
            "the first principal's credentials: an Authorization value ('Bearer sk_…', 'sk:abc')"
                + " or a whole header, a name, a colon and a space ('X-Api-Key: k1'); also sent to"
                + " --effect-url")
    String auth;

    @Option(
        names = "--auth2",
        paramLabel = "V",
        description = "a second principal's credentials, in the same form")
    String auth2;

    @Option(
        names = "--header",
        paramLabel = "'N: V'",
        description = "an extra header on every request (repeatable)")
    List<String> headers = new ArrayList<>();

    @Option(
        names = "--effect-url",
        paramLabel = "T",
        description =
            "a GET URL (a path under the base URL, or http://…) counting the resources {{unique}}"
                + " created, e.g. '/v1/payments?merchantReference={{unique}}', with --auth; asked"
                + " once before any check, where it must answer a count of 0; without one, nothing"
                + " proves an operation ran exactly once (a warning names the checks that judge by"
                + " the answers alone)")
    String effectUrl;

    @Option(
        names = "--effect-count",
        paramLabel = "PATH",
        description =
            "where the count is in its JSON answer: 'count', 'data.length' (default: the answer is"
                + " an array, or a number)")
    String effectCount = "";

    @Option(
        names = "--profile",
        paramLabel = "P",
        description = "ietf (default), stripe, or a properties file (base=ietf, …)")
    String profile = "ietf";

    @Option(
        names = "--concurrency",
        paramLabel = "N",
        description = "requests released together by the race checks (8; 2 to 256)")
    String concurrency = "8";

    @Option(
        names = "--inflight-delay-ms",
        paramLabel = "N",
        description =
            "when the second request of an in-flight check starts (200; shorter than --timeout-s)")
    String inflightDelay = "200";

    @Option(names = "--timeout-s", paramLabel = "N", description = "per request (30; 1 to 3600)")
    String timeout = "30";

    @Option(names = "--json", paramLabel = "FILE", description = "also write the report as JSON")
    String json;

    @Option(
        names = "--junit",
        paramLabel = "FILE",
        description =
            "also write it as JUnit XML (a failure's message is what the check found; the warnings"
                + " are the suite's properties and system-err)")
    String junit;

    @Option(
        names = "--only",
        paramLabel = "ID,ID",
        description =
            "run only these checks (ids as in the report; an unknown id is a usage error); an API"
                + " that takes only the other key form is then a warning in the report, not a"
                + " key.form verdict")
    String only;

    @Option(
        names = "--fail-on",
        paramLabel = "KIND",
        description =
            "any (default): exit status 1 when any check failed; guarantee: only when one violated"
                + " the idempotency guarantee (differences from the profile's conventions are"
                + " still reported)")
    String failOn = "any";

    @Option(
        names = {"-h", "--help"},
        usageHelp = true,
        description = "this help")
    boolean help;
  }

  /** The usage, generated from the options ({@code --help}, and after a usage error). */
  static String usage() {
    return commandLine(new CommandLineOptions()).getUsageMessage(CommandLine.Help.Ansi.OFF);
  }

  private static CommandLine commandLine(CommandLineOptions options) {
    CommandLine line = new CommandLine(options);
    // Later options win: a CI job may append a --profile to a shared command.
    line.setOverwrittenOptionsAllowed(true);
    return line;
  }

  static Options parse(String[] args) throws Exception {
    CommandLineOptions a = new CommandLineOptions();
    CommandLine line = commandLine(a);
    try {
      line.parseArgs(args);
    } catch (CommandLine.UnmatchedArgumentException e) {
      String flag = e.getUnmatched().get(0);
      throw new IllegalArgumentException(
          "unknown option "
              + flag
              + (flag.startsWith("--") && flag.contains("=")
                  ? "; give the value as the next argument: "
                      + flag.substring(0, flag.indexOf('='))
                      + " VALUE"
                  : ""));
    } catch (CommandLine.MissingParameterException e) {
      String flag =
          e.getMissing().isEmpty() || !(e.getMissing().get(0) instanceof OptionSpec option)
              ? "an option"
              : option.longestName();
      throw new IllegalArgumentException(flag + " needs a value");
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(e.getMessage());
    }
    if (line.isUsageHelpRequested()) {
      throw new HelpRequested();
    }
    if (a.baseUrl == null || a.path == null || a.body == null) {
      throw new IllegalArgumentException("--base-url, --path and --body are required");
    }
    URI baseUrl =
        url(
            "--base-url",
            a.baseUrl.endsWith("/") ? a.baseUrl.substring(0, a.baseUrl.length() - 1) : a.baseUrl);
    String method = a.method;
    String path = a.path;
    String otherPath = a.otherPath;
    String effectUrl = a.effectUrl;
    Profile profile = Profile.named(a.profile);
    // Past an int, the cast wrapped: 4294967298 became 2 and passed the range check.
    int concurrency = (int) Math.min(number("--concurrency", a.concurrency), Integer.MAX_VALUE);
    Duration inflightDelay = Duration.ofMillis(number("--inflight-delay-ms", a.inflightDelay));
    Duration timeout = Duration.ofSeconds(number("--timeout-s", a.timeout));
    Path json = a.json == null ? null : Path.of(a.json);
    Path junit = a.junit == null ? null : Path.of(a.junit);
    Set<String> only =
        a.only == null ? Set.of() : Set.copyOf(List.of(a.only.trim().split("\\s*,\\s*")));
    FailOn failOn =
        switch (a.failOn) {
          case "any" -> FailOn.ANY;
          case "guarantee" -> FailOn.GUARANTEE;
          default ->
              throw new IllegalArgumentException(
                  "--fail-on is any or guarantee, not '" + a.failOn + "'");
        };
    if (!"http".equalsIgnoreCase(baseUrl.getScheme()) || baseUrl.getHost() == null) {
      throw new IllegalArgumentException(
          "--base-url must be an http:// URL with a host, e.g. http://localhost:8080 (not "
              + baseUrl
              + "); https is not supported: the checker speaks plain HTTP/1.1 on its own sockets,"
              + " to send malformed headers no client library would");
    }
    requirePort("--base-url", baseUrl);
    if (concurrency < 2 || concurrency > MAX_CONCURRENCY) {
      throw new IllegalArgumentException(
          "--concurrency must be between 2 and "
              + MAX_CONCURRENCY
              + " (each request released together holds a connection and a thread of its own)");
    }
    if (timeout.isZero()) {
      throw new IllegalArgumentException("--timeout-s must be at least 1");
    }
    if (timeout.compareTo(MAX_TIMEOUT) > 0) {
      // A socket's timeout is an int of milliseconds: a longer one overflowed into a negative
      // timeout and a stack trace.
      throw new IllegalArgumentException(
          "--timeout-s must be at most "
              + MAX_TIMEOUT.toSeconds()
              + " (an hour), not "
              + timeout.toSeconds());
    }
    if (inflightDelay.compareTo(timeout) >= 0) {
      // The in-flight checks sleep this long before their second request, which must find the
      // first still waiting for its answer: a longer delay only hung the run.
      throw new IllegalArgumentException(
          "--inflight-delay-ms must be shorter than --timeout-s ("
              + timeout.toMillis()
              + " ms): the second request of an in-flight check starts while the first still"
              + " waits for its answer; not "
              + inflightDelay.toMillis());
    }
    if (!method.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
      throw new IllegalArgumentException(
          "--method is one HTTP method, such as POST or PUT, not '" + method + "'");
    }
    requireFile("--json", json);
    requireFile("--junit", junit);
    requirePath("--path", path);
    if (otherPath != null) {
      requirePath("--other-path", otherPath);
    }
    if (effectUrl != null) {
      if (!effectUrl.contains("{{unique}}")) {
        throw new IllegalArgumentException(
            "--effect-url must contain {{unique}}: it counts what one check's requests created,"
                + " e.g. '/v1/payments?merchantReference={{unique}}'");
      }
      if (!effectUrl.startsWith("/") && !effectUrl.startsWith("http://")) {
        throw new IllegalArgumentException(
            "--effect-url is a path under --base-url (starting with /) or an http:// URL, not "
                + effectUrl
                + (effectUrl.startsWith("https://") ? " (https is not supported)" : ""));
      }
      // As the checker will ask it, with a value in place of {{unique}}.
      String sample = effectUrl.replace("{{unique}}", "u");
      requirePort(
          "--effect-url", url("--effect-url", sample.startsWith("/") ? baseUrl + sample : sample));
    }
    List<Map.Entry<String, String>> errorHeaders = new ArrayList<>();
    a.errorHeaders.forEach(h -> errorHeaders.add(header(h)));
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    a.headers.forEach(h -> headers.add(header(h)));
    return new Options(
        baseUrl,
        method,
        path,
        a.body,
        a.contentType,
        a.mismatchBody,
        otherPath,
        a.invalidBody,
        a.errorBody,
        List.copyOf(errorHeaders),
        a.auth == null ? null : authHeader("--auth", a.auth),
        a.auth2 == null ? null : authHeader("--auth2", a.auth2),
        List.copyOf(headers),
        effectUrl,
        a.effectCount,
        profile,
        concurrency,
        inflightDelay,
        timeout,
        json,
        junit,
        only,
        failOn);
  }

  /** {@code --help}: the usage on standard output, exit status 0. */
  static final class HelpRequested extends IllegalArgumentException {
    HelpRequested() {
      super("help");
    }
  }

  /**
   * A report goes to a file: a directory there would be found only after every check ran, and the
   * run's verdicts would be lost with exit status 2.
   */
  private static void requireFile(String flag, Path file) {
    if (file != null && java.nio.file.Files.isDirectory(file)) {
      throw new IllegalArgumentException(
          flag + " names a directory, " + file + "; give a file, e.g. " + file.resolve("report"));
    }
  }

  /** A URL, or a usage error naming the option (not a bare {@link URI} parse error). */
  private static URI url(String flag, String v) {
    try {
      return new URI(v);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          flag
              + " is not a URL: "
              + e.getReason()
              + " at index "
              + e.getIndex()
              + " of '"
              + v
              + "'");
    }
  }

  /** A host, and a port a socket can connect to if the URL names one. */
  private static void requirePort(String flag, URI url) {
    if (url.getHost() == null) {
      throw new IllegalArgumentException(flag + " names no host (or no valid port): " + url);
    }
    if (url.getPort() == 0 || url.getPort() > 65535) {
      throw new IllegalArgumentException(
          flag
              + " has port "
              + url.getPort()
              + ", which no server listens on (1 to 65535): "
              + url);
    }
  }

  private static void requirePath(String flag, String path) {
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException(
          flag + " is a path under --base-url starting with /, e.g. /v1/payments, not " + path);
    }
  }

  private static long number(String flag, String v) {
    try {
      long n = Long.parseLong(v.trim());
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " takes a whole number, not '" + v + "'");
    }
  }

  /**
   * {@code --auth}'s whole-header form: a header name (an RFC 9110 token), a colon, then a space or
   * a tab before the value, or nothing (a header without a value, refused).
   */
  private static final Pattern HEADER =
      Pattern.compile("([!#$%&'*+.^_`|~0-9A-Za-z-]+):(?:[ \t]+(.*))?", Pattern.DOTALL);

  /** A token, a colon and no space: an Authorization value, though it may be meant as a header. */
  private static final Pattern TOKEN_COLON = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+:\\S.*");

  /**
   * {@code --auth}'s header: {@code Name: value}, with a space after the colon, is that header (an
   * API key header, a session cookie); anything else is the value of {@code Authorization} ({@code
   * Bearer …}, {@code Basic …}, and a token with a colon in it, {@code sk:abc}). An Authorization
   * value with a space after its first colon is written out in full, {@code Authorization: key:
   * secret}.
   */
  static Map.Entry<String, String> authHeader(String flag, String v) {
    Matcher m = HEADER.matcher(v.trim());
    if (!m.matches()) {
      if (v.isBlank()) {
        throw new IllegalArgumentException(
            flag
                + " is an Authorization value ('Bearer …') or a header ('X-Api-Key: …'), not empty");
      }
      return Map.entry("Authorization", v.trim());
    }
    String value = m.group(2) == null ? "" : m.group(2).trim();
    if (value.isEmpty()) {
      throw new IllegalArgumentException(
          flag + " names the header " + m.group(1) + " but gives it no value: '" + v + "'");
    }
    return Map.entry(m.group(1), value);
  }

  /**
   * A note for an {@code --auth} sent as {@code Authorization} that reads like a header written
   * without the space ({@code X-Api-Key:k1}), so the user sees what is sent; empty otherwise.
   */
  static java.util.Optional<String> authNote(String flag, Map.Entry<String, String> auth) {
    if (auth == null
        || !auth.getKey().equals("Authorization")
        || !TOKEN_COLON.matcher(auth.getValue()).matches()) {
      return java.util.Optional.empty();
    }
    String name = auth.getValue().substring(0, auth.getValue().indexOf(':'));
    return java.util.Optional.of(
        flag
            + " is sent as 'Authorization: "
            + auth.getValue()
            + "'; to send a header "
            + name
            + " instead, put a space after the colon: '"
            + name
            + ": "
            + auth.getValue().substring(name.length() + 1)
            + "'");
  }

  private static Map.Entry<String, String> header(String v) {
    int colon = v.indexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("a header is 'Name: value', not " + v);
    }
    return Map.entry(v.substring(0, colon).trim(), v.substring(colon + 1).trim());
  }
}
