package dev.idemkit.conformance;

import dev.idemkit.conformance.RawHttp.Response;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/** How the checks compare answers and put them into words. */
final class Answers {

  private Answers() {}

  /** An ISO-8601 instant or date-time, such as {@code 2026-12-05T01:14:37.123Z}. */
  private static final Pattern TIMESTAMP =
      Pattern.compile(
          "\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?");

  private static final Pattern UUID =
      Pattern.compile(
          "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

  /**
   * A JSON field that names an identifier ({@code id}, {@code …Id}, {@code …_id}) and its value.
   */
  private static final Pattern ID_FIELD =
      Pattern.compile("(\"(?:id|[A-Za-z0-9_]*(?:Id|_id|ID))\"\\s*:\\s*)(\"[^\"]*\"|\\d+)");

  /** {@code n} and the noun, in the plural unless {@code n} is one: "1 effect", "2 effects". */
  static String count(long n, String noun) {
    return n + " " + (n == 1 ? noun : plural(noun));
  }

  private static String plural(String noun) {
    if (noun.endsWith("s") || noun.endsWith("x")) {
      return noun + "es";
    }
    return noun.endsWith("y") && !noun.endsWith("ay") && !noun.endsWith("ey")
        ? noun.substring(0, noun.length() - 1) + "ies"
        : noun + "s";
  }

  /** Whether two answers are the same: status and body bytes. */
  static boolean same(Response first, Response again) {
    return first.status() == again.status() && Arrays.equals(first.body(), again.body());
  }

  /**
   * A body with what changes from one rendering to the next masked: timestamps, UUIDs and the
   * values of identifier fields. Two answers with the same shape differ only in those.
   */
  static String shape(byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8);
    text = ID_FIELD.matcher(text).replaceAll("$1\"<id>\"");
    text = TIMESTAMP.matcher(text).replaceAll("<time>");
    return UUID.matcher(text).replaceAll("<id>");
  }

  /** Whether two bodies differ, and only in timestamps or identifiers. */
  static boolean differOnlyInTimesOrIds(byte[] a, byte[] b) {
    return !Arrays.equals(a, b) && shape(a).equals(shape(b));
  }

  /** How {@code again} differs from {@code first}, in a few words. */
  static String difference(Response first, Response again) {
    if (first.status() != again.status()) {
      return again.summary() + " instead of " + first.summary();
    }
    return (differOnlyInTimesOrIds(first.body(), again.body())
            ? "a body that differs only in timestamps or ids, "
            : "other body bytes, ")
        + again.summary()
        + " instead of "
        + first.summary();
  }

  /**
   * What in {@code again}, a replay of {@code first}, is not the first answer: another status,
   * body, Location or Content-Type breaks the guarantee; a missing replay marker, the profile's
   * conventions.
   */
  static void sameAnswer(
      String what, Response first, Response again, Profile profile, Findings findings) {
    if (!same(first, again)) {
      findings.violation(what + ": " + difference(first, again));
      if (first.status() != again.status()) {
        return;
      }
    }
    if (!first.header("Location").equals(again.header("Location"))) {
      findings.violation(
          what
              + ": Location "
              + again.header("Location").orElse("(none)")
              + " instead of "
              + first.header("Location").orElse("(none)"));
    }
    String ct1 = first.header("Content-Type").orElse("");
    String ct2 = again.header("Content-Type").orElse("");
    if (!ct1.equalsIgnoreCase(ct2)) {
      findings.violation(what + ": Content-Type " + ct2 + " instead of " + ct1);
    }
    markerProblem(again, true, profile).ifPresent(m -> findings.differs(what + ": " + m));
  }

  /**
   * What is wrong with the profile's replay marker on {@code r}: missing on a replay, or on a first
   * answer.
   */
  static Optional<String> markerProblem(Response r, boolean replay, Profile profile) {
    if (profile.replayHeader().isEmpty()) {
      return Optional.empty();
    }
    boolean marked = isReplayMarked(r, profile);
    if (replay && !marked) {
      return Optional.of("no replay marker '" + profile.replayHeader() + "'");
    }
    if (!replay && marked) {
      return Optional.of("the first answer is marked as a replay");
    }
    return Optional.empty();
  }

  /**
   * Whether {@code r} carries the profile's replay marker ({@code Idempotent-Replayed: true} if it
   * names none).
   */
  static boolean isReplayMarked(Response r, Profile profile) {
    String marker =
        profile.replayHeader().isEmpty() ? "Idempotent-Replayed: true" : profile.replayHeader();
    int colon = marker.indexOf(':');
    String name = marker.substring(0, colon).trim();
    String value = marker.substring(colon + 1).trim();
    return r.header(name).map(v -> v.equalsIgnoreCase(value)).orElse(false);
  }

  static String replayMarkerNote(Profile profile) {
    return profile.replayHeader().isEmpty() ? "" : ", marked " + profile.replayHeader();
  }

  /**
   * For a report: why an answer with the in-progress status is not the profile's in-progress answer
   * (its code, or its form), or nothing for another status.
   */
  static String notInProgress(Response r, Profile profile) {
    if (r.status() != profile.inProgressStatus()) {
      return "";
    }
    Profile.Code code = profile.inProgressCode();
    String has =
        code.isNone()
            ? "neither application/problem+json nor a Link rel=describedby"
            : code.foundIn(r).map(v -> code.path() + "=" + v).orElse("no " + code.path());
    return ": not the " + profile.name() + " profile's in-progress answer (" + has + ")";
  }

  static boolean validRetryAfter(String value) {
    String v = value.trim();
    if (v.matches("\\d+")) {
      return true;
    }
    try {
      java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.parse(v);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** At most {@code n} chars of {@code text}, never half of a surrogate pair. */
  static String prefix(String text, int n) {
    int end = Math.min(n, text.length());
    if (end > 0 && end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    return text.substring(0, end);
  }

  /** Headers as sent, long values shortened and control characters shown as {@code \xNN}. */
  static String describe(List<Map.Entry<String, String>> headers) {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, String> h : headers) {
      String v = h.getValue();
      String shown = v.length() > 40 ? prefix(v, 20) + "…(" + v.length() + " chars)" : v;
      StringBuilder printable = new StringBuilder();
      for (char c : shown.toCharArray()) {
        printable.append(
            c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
      }
      if (out.length() > 0) {
        out.append(", ");
      }
      out.append(h.getKey()).append(": ").append(printable);
    }
    return out.toString();
  }
}
