package dev.idemkit.conformance;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * What a server is expected to answer: the IETF draft ({@code ietf}), Stripe's semantics ({@code
 * stripe}) or a custom mapping read from a properties file that starts from one of them ({@code
 * base=ietf}) and overrides any of the keys below.
 *
 * @param name the profile's name, in reports
 * @param requireKey whether a request without a key must be refused ({@code require-key})
 * @param missingKeyStatus the status for a missing key ({@code missing-key-status})
 * @param malformedStatus the status for a malformed key ({@code malformed-status})
 * @param sfString whether keys are sent as structured-field strings ({@code key-form=sf-string}) or
 *     bare ({@code key-form=bare})
 * @param maxKeyLength the longest key the server must accept ({@code max-key-length})
 * @param mismatchStatus the status for a key reused with another request ({@code mismatch-status})
 * @param inProgressStatus the status while the first request runs ({@code in-progress-status})
 * @param replayHeader a header every replay carries, as {@code Name: value}, or empty ({@code
 *     replay-header})
 * @param retryAfterRequired whether an in-progress answer must say when to retry ({@code
 *     retry-after-required})
 * @param validationErrorsStored whether a request refused by validation is remembered under its key
 *     ({@code validation-errors-stored}); if not, the fixed request with the same key must run
 */
record Profile(
    String name,
    boolean requireKey,
    int missingKeyStatus,
    int malformedStatus,
    boolean sfString,
    int maxKeyLength,
    int mismatchStatus,
    int inProgressStatus,
    String replayHeader,
    boolean retryAfterRequired,
    boolean validationErrorsStored) {

  /**
   * draft-ietf-httpapi-idempotency-key-header: the key is an sf-string; a missing or malformed key
   * is a 400, a reused key with another payload a 422, a request still being processed a 409. The
   * draft names no replay header, so none is required (its presence is reported).
   */
  static final Profile IETF =
      new Profile("ietf", true, 400, 400, true, 255, 422, 409, "", true, false);

  /**
   * Stripe: the key is optional and bare (at most 255 characters), a replay carries {@code
   * Idempotent-Replayed: true}, reused keys with other parameters are a 400 (idempotency_error),
   * concurrent use a 409.
   */
  static final Profile STRIPE =
      new Profile(
          "stripe",
          false,
          400,
          400,
          false,
          255,
          400,
          409,
          "Idempotent-Replayed: true",
          false,
          false);

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
  static final java.util.List<String> KEYS =
      java.util.List.of(
          "base",
          "name",
          "require-key",
          "missing-key-status",
          "malformed-status",
          "key-form",
          "max-key-length",
          "mismatch-status",
          "in-progress-status",
          "replay-header",
          "retry-after-required",
          "validation-errors-stored");

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
    return new Profile(
        p.getProperty("name", file.getFileName().toString()),
        bool(p, "require-key", base.requireKey),
        integer(p, "missing-key-status", base.missingKeyStatus),
        integer(p, "malformed-status", base.malformedStatus),
        !"bare".equals(p.getProperty("key-form", base.sfString ? "sf-string" : "bare")),
        integer(p, "max-key-length", base.maxKeyLength),
        integer(p, "mismatch-status", base.mismatchStatus),
        integer(p, "in-progress-status", base.inProgressStatus),
        p.getProperty("replay-header", base.replayHeader).trim(),
        bool(p, "retry-after-required", base.retryAfterRequired),
        bool(p, "validation-errors-stored", base.validationErrorsStored));
  }

  /** The header value for a key, in the profile's form. */
  String keyHeader(String key) {
    return sfString ? "\"" + key + "\"" : key;
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
