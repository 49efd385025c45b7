package dev.idemkit.conformance;

/**
 * The verdict of one check.
 *
 * @param id the stable id, such as {@code replay.completed}
 * @param rationale one line: what a correct server does and why it matters
 * @param status the verdict
 * @param breach for a failure, what it breaks: the idempotency guarantee or only the profile's
 *     conventions; {@link Breach#NONE} otherwise
 * @param detail what was sent and seen, enough to reproduce it
 * @param millis how long the check took
 */
record CheckResult(
    String id, String rationale, Status status, Breach breach, String detail, long millis) {

  /** {@code INFO} reports a behaviour the profile leaves open; it never fails a run. */
  enum Status {
    PASS,
    FAIL,
    SKIP,
    INFO
  }

  /** What a failure breaks. */
  enum Breach {
    /** Not a failure. */
    NONE,
    /**
     * The idempotency guarantee: an effect lost or duplicated, or one key answered differently (a
     * replay that is not the first answer, another request answered with the first one's).
     */
    GUARANTEE,
    /**
     * Only this profile's conventions: a status, an error code, a header name or marker other than
     * the profile's, with every effect and answer as the guarantee wants them.
     */
    CONVENTION;

    /** How a report names it. */
    String phrase() {
      return switch (this) {
        case NONE -> "";
        case GUARANTEE -> "violates the idempotency guarantee";
        case CONVENTION -> "differs from the profile's conventions";
      };
    }
  }

  boolean violatesGuarantee() {
    return status == Status.FAIL && breach == Breach.GUARANTEE;
  }
}
