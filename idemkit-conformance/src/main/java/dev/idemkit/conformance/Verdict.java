package dev.idemkit.conformance;

import dev.idemkit.conformance.CheckResult.Breach;
import dev.idemkit.conformance.CheckResult.Status;

/** What a check decided, and for a failure, what it breaks. */
record Verdict(Status status, Breach breach, String detail) {

  static Verdict pass(String detail) {
    return new Verdict(Status.PASS, Breach.NONE, detail);
  }

  /** A lost or duplicated effect, or one key answered differently. */
  static Verdict violation(String detail) {
    return new Verdict(Status.FAIL, Breach.GUARANTEE, detail);
  }

  /** An answer in another form than the profile's, every effect and answer as they should be. */
  static Verdict differs(String detail) {
    return new Verdict(Status.FAIL, Breach.CONVENTION, detail);
  }

  static Verdict skip(String detail) {
    return new Verdict(Status.SKIP, Breach.NONE, detail);
  }

  static Verdict info(String detail) {
    return new Verdict(Status.INFO, Breach.NONE, detail);
  }
}
