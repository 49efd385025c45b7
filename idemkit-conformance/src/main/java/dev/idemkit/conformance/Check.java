package dev.idemkit.conformance;

/**
 * A check: a stable id, its rationale (one line: what a correct server does), and the scenario that
 * decides it.
 */
record Check(String id, String rationale, Scenario scenario) {

  /** Sends what the check needs and decides. */
  @FunctionalInterface
  interface Scenario {
    Verdict run() throws Exception;
  }
}
