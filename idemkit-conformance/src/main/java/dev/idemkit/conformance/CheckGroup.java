package dev.idemkit.conformance;

import java.util.List;

/** Checks of one concern, speaking to the endpoint under test and judging by its profile. */
abstract class CheckGroup {

  final Endpoint api;
  final Profile profile;

  CheckGroup(Endpoint api) {
    this.api = api;
    this.profile = api.profile;
  }

  /** The group's checks, in the order they run. */
  abstract List<Check> checks();
}
