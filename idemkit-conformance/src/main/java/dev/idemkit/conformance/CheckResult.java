package dev.idemkit.conformance;

/**
 * The verdict of one check.
 *
 * @param id the stable id, such as {@code replay.completed}
 * @param rationale one line: what a correct server does and why it matters
 * @param status the verdict
 * @param detail what was sent and seen, enough to reproduce it
 * @param millis how long the check took
 */
record CheckResult(String id, String rationale, Status status, String detail, long millis) {

  /** {@code INFO} reports a behaviour the profile leaves open; it never fails a run. */
  enum Status {
    PASS,
    FAIL,
    SKIP,
    INFO
  }
}
