package dev.idemkit.conformance;

import dev.idemkit.conformance.RawHttp.Response;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;

/**
 * What a server is expected to answer: the IETF draft ({@code ietf}), Stripe's semantics ({@code
 * stripe}) or a custom mapping read from a properties file that starts from one of them ({@code
 * base=ietf}) and overrides any of the keys below.
 *
 * @param name the profile's name, in reports
 * @param keyHeader the header that carries the key ({@code key-header}, {@code Idempotency-Key}
 *     unless the API names another, such as {@code X-Idempotency-Key})
 * @param requireKey whether a request without a key must be refused ({@code require-key})
 * @param missingKeyStatus the status for a missing key ({@code missing-key-status})
 * @param malformedStatus the status for a malformed key ({@code malformed-status})
 * @param sfString whether keys are sent as structured-field strings ({@code key-form=sf-string}) or
 *     bare ({@code key-form=bare})
 * @param maxKeyLength the longest key the server must accept ({@code max-key-length})
 * @param mismatchStatus the status for a key reused with another request ({@code mismatch-status})
 * @param inProgressStatus the status while the first request runs ({@code in-progress-status})
 * @param inProgressProblem whether an in-progress answer is a problem, as in the draft: {@code
 *     application/problem+json} or a {@code Link} with {@code rel="describedby"} ({@code
 *     in-progress-problem})
 * @param inProgressCode what in the body marks an in-progress answer, if anything ({@code
 *     in-progress-code=PATH=VALUE})
 * @param mismatchCode what in the body marks a reused-key answer, if anything ({@code
 *     mismatch-code=PATH=VALUE})
 * @param replayHeader a header every replay carries, as {@code Name: value}, or empty ({@code
 *     replay-header})
 * @param retryAfterRequired whether an in-progress answer must say when to retry ({@code
 *     retry-after-required})
 * @param validationErrorsStored whether a request refused by validation is remembered under its key
 *     ({@code validation-errors-stored}); if not, the fixed request with the same key must run
 * @param refusalsReplayed whether an error answer of the operation itself (a decline) is stored and
 *     replayed to a retry with the same key ({@code refusals-replayed}); if so, a retry that runs
 *     it again is a second effect of one key
 */
record Profile(
    String name,
    String keyHeader,
    boolean requireKey,
    int missingKeyStatus,
    int malformedStatus,
    boolean sfString,
    int maxKeyLength,
    int mismatchStatus,
    int inProgressStatus,
    boolean inProgressProblem,
    Code inProgressCode,
    Code mismatchCode,
    String replayHeader,
    boolean retryAfterRequired,
    boolean validationErrorsStored,
    boolean refusalsReplayed) {

  /** The header name a key goes in unless a profile names another. */
  static final String DEFAULT_KEY_HEADER = "Idempotency-Key";

  /**
   * A value in an answer's JSON body that says what the answer is, such as {@code
   * error.code=idempotency_key_in_use}; {@link #NONE} when the profile names none.
   */
  record Code(String path, String value) {

    static final Code NONE = new Code("", "");

    static Code parse(String setting, String spec) {
      if (spec.isEmpty()) {
        return NONE;
      }
      int eq = spec.indexOf('=');
      if (eq <= 0 || eq == spec.length() - 1) {
        throw new IllegalArgumentException(
            setting
                + " is PATH=VALUE, a field of the answer's JSON body and its value (e.g."
                + " errorCode=IDEMPOTENCY_REQUEST_IN_PROGRESS or error.code=idempotency_key_in_use),"
                + " not '"
                + spec
                + "'");
      }
      return new Code(spec.substring(0, eq).trim(), spec.substring(eq + 1).trim());
    }

    boolean isNone() {
      return path.isEmpty();
    }

    /** The value at this code's path in the answer's JSON body, if any. */
    Optional<String> foundIn(Response r) {
      try {
        return JsonPath.find(JsonDocuments.parse(r.bodyText()), path).map(String::valueOf);
      } catch (RuntimeException notJson) {
        return Optional.empty();
      }
    }

    /** Whether the answer's body has this value at this path; always, for {@link #NONE}. */
    boolean matches(Response r) {
      return isNone() || foundIn(r).map(value::equals).orElse(false);
    }

    @Override
    public String toString() {
      return isNone() ? "" : path + "=" + value;
    }
  }

  /** What an answer to a request with a key is, by this profile's statuses and codes. */
  enum Answer {
    SUCCESS,
    IN_PROGRESS,
    MISMATCH,
    /** The profile gives both the same status and nothing to tell them apart by. */
    IN_PROGRESS_OR_MISMATCH,
    OTHER
  }

  /**
   * draft-ietf-httpapi-idempotency-key-header: the key is an sf-string; a missing or malformed key
   * is a 400, a reused key with another payload a 422, a request still being processed a 409. The
   * draft says these answers SHOULD describe the problem (a body with a link to documentation, or a
   * {@code Link} header) but names no type or code of its own, so any 409 is read as in progress (a
   * profile file can demand more: {@code in-progress-problem=true}, {@code in-progress-code}). It
   * names no replay header either, so none is required (a replay header's presence is reported). A
   * retry of a completed request gets "the result of the previously completed operation, success or
   * an error": a refusal such as a decline is replayed, not run again.
   */
  static final Profile IETF =
      new Profile(
          "ietf",
          DEFAULT_KEY_HEADER,
          true,
          400,
          400,
          true,
          255,
          422,
          409,
          false,
          Code.NONE,
          Code.NONE,
          "",
          true,
          false,
          true);

  /**
   * Stripe: the key is optional and bare (at most 255 characters), a replay carries {@code
   * Idempotent-Replayed: true}, reused keys with other parameters are a 400 of type {@code
   * idempotency_error}, concurrent use a 409 with code {@code idempotency_key_in_use}; every result
   * of an operation that started, errors included, is saved and replayed.
   */
  static final Profile STRIPE =
      new Profile(
          "stripe",
          DEFAULT_KEY_HEADER,
          false,
          400,
          400,
          false,
          255,
          400,
          409,
          false,
          new Code("error.code", "idempotency_key_in_use"),
          new Code("error.type", "idempotency_error"),
          "Idempotent-Replayed: true",
          false,
          false,
          true);

  /**
   * Classifies an answer. An in-progress answer has the in-progress status and, where the profile
   * says so, the problem form and the in-progress code; a mismatch has the mismatch status and the
   * mismatch code. When one status serves both, only a code can tell them apart.
   */
  Answer classify(Response r) {
    if (r.success()) {
      return Answer.SUCCESS;
    }
    boolean inProgress =
        r.status() == inProgressStatus
            && inProgressCode.matches(r)
            && (!inProgressProblem || isProblem(r));
    boolean mismatch = r.status() == mismatchStatus && mismatchCode.matches(r);
    if (inProgress && mismatch) {
      if (!inProgressCode.isNone() && mismatchCode.isNone()) {
        return Answer.IN_PROGRESS;
      }
      if (!mismatchCode.isNone() && inProgressCode.isNone()) {
        return Answer.MISMATCH;
      }
      return Answer.IN_PROGRESS_OR_MISMATCH;
    }
    return inProgress ? Answer.IN_PROGRESS : mismatch ? Answer.MISMATCH : Answer.OTHER;
  }

  /** Empty when every answer can be classified; else why an in-progress one cannot. */
  Optional<String> ambiguity() {
    if (inProgressStatus != mismatchStatus
        || (inProgressCode.isNone() != mismatchCode.isNone())
        || (!inProgressCode.isNone() && !inProgressCode.equals(mismatchCode))) {
      return Optional.empty();
    }
    return Optional.of(
        "the "
            + name
            + " profile has "
            + inProgressStatus
            + " both for a request in progress and for a key reused with another request, and no"
            + " in-progress-code or mismatch-code that tells them apart");
  }

  /** The in-progress answer this profile expects, for reports. */
  String inProgressAnswer() {
    return inProgressStatus
        + (inProgressProblem ? " as application/problem+json or with Link rel=describedby" : "")
        + (inProgressCode.isNone()
            ? ""
            : (inProgressProblem ? ", " : " ") + "with " + inProgressCode);
  }

  /** The reused-key answer this profile expects, for reports. */
  String mismatchAnswer() {
    return mismatchStatus + (mismatchCode.isNone() ? "" : " with " + mismatchCode);
  }

  /** The draft's error forms: a problem body, or a Link to documentation. */
  private static boolean isProblem(Response r) {
    String type = r.header("Content-Type").orElse("").toLowerCase(Locale.ROOT);
    boolean problemJson = type.split(";")[0].trim().equals("application/problem+json");
    boolean described =
        r.headers().stream()
            .filter(h -> h.getKey().equalsIgnoreCase("Link"))
            .anyMatch(h -> h.getValue().toLowerCase(Locale.ROOT).matches(".*rel=\"?describedby.*"));
    return problemJson || described;
  }

  static Profile named(String spec) throws IOException {
    return switch (spec) {
      case "ietf" -> IETF;
      case "stripe" -> STRIPE;
      default -> {
        if (!Files.isRegularFile(Path.of(spec))) {
          throw new IllegalArgumentException(
              "--profile is ietf, stripe, or a properties file; no file " + spec);
        }
        yield custom(Path.of(spec));
      }
    };
  }

  /** The settings a profile file may have. */
  static final List<String> KEYS =
      List.of(
          "base",
          "name",
          "key-header",
          "require-key",
          "missing-key-status",
          "malformed-status",
          "key-form",
          "max-key-length",
          "mismatch-status",
          "in-progress-status",
          "in-progress-problem",
          "in-progress-code",
          "mismatch-code",
          "replay-header",
          "retry-after-required",
          "validation-errors-stored",
          "refusals-replayed");

  static Profile custom(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file)) {
      p.load(in);
    }
    for (String name : p.stringPropertyNames()) {
      if (!KEYS.contains(name)) {
        throw new IllegalArgumentException(
            file
                + ": unknown setting '"
                + name
                + "'; a profile may set "
                + String.join(", ", KEYS));
      }
    }
    String baseName = p.getProperty("base", "ietf").trim();
    if (!baseName.equals("ietf") && !baseName.equals("stripe")) {
      throw new IllegalArgumentException(file + ": base is ietf or stripe, not '" + baseName + "'");
    }
    String keyForm = p.getProperty("key-form", "").trim();
    if (!keyForm.isEmpty() && !keyForm.equals("bare") && !keyForm.equals("sf-string")) {
      throw new IllegalArgumentException(
          file + ": key-form is sf-string or bare, not '" + keyForm + "'");
    }
    Profile base = baseName.equals("stripe") ? STRIPE : IETF;
    String keyHeader = p.getProperty("key-header", base.keyHeader).trim();
    if (!keyHeader.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
      throw new IllegalArgumentException(
          file
              + ": key-header is one header name, such as X-Idempotency-Key, not '"
              + keyHeader
              + "'");
    }
    return new Profile(
        p.getProperty("name", file.getFileName().toString()),
        keyHeader,
        bool(p, "require-key", base.requireKey),
        integer(p, "missing-key-status", base.missingKeyStatus),
        integer(p, "malformed-status", base.malformedStatus),
        !"bare".equals(p.getProperty("key-form", base.sfString ? "sf-string" : "bare")),
        integer(p, "max-key-length", base.maxKeyLength),
        integer(p, "mismatch-status", base.mismatchStatus),
        integer(p, "in-progress-status", base.inProgressStatus),
        bool(p, "in-progress-problem", base.inProgressProblem),
        Code.parse(
            "in-progress-code",
            p.getProperty("in-progress-code", base.inProgressCode.toString()).trim()),
        Code.parse(
            "mismatch-code", p.getProperty("mismatch-code", base.mismatchCode.toString()).trim()),
        p.getProperty("replay-header", base.replayHeader).trim(),
        bool(p, "retry-after-required", base.retryAfterRequired),
        bool(p, "validation-errors-stored", base.validationErrorsStored),
        bool(p, "refusals-replayed", base.refusalsReplayed));
  }

  private static boolean bool(Properties p, String name, boolean fallback) {
    String v = p.getProperty(name, String.valueOf(fallback)).trim();
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException(name + " is true or false, not '" + v + "'");
    }
    return Boolean.parseBoolean(v);
  }

  private static int integer(Properties p, String name, int fallback) {
    String v = p.getProperty(name, String.valueOf(fallback)).trim();
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " takes a whole number, not '" + v + "'");
    }
  }
}
