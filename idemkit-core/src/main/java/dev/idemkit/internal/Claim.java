package dev.idemkit.internal;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.spi.Ownership;
import java.util.HashMap;
import java.util.Map;

/** What a run starts from: the record's owner, recovery point, pending call and data. */
record Claim(
    Ownership ownership,
    String recoveryPoint,
    String pendingExternal,
    Map<String, String> data,
    boolean resumed,
    int recoveryAttempts) {

  /** A record not written yet: a record-last run's, before its first commit inserts it. */
  static final Claim UNWRITTEN = new Claim(null, null, null, Map.of(), false, 0);

  static Claim fresh(IdempotencyRecord record) {
    return new Claim(Ownership.of(record), null, null, new HashMap<>(), false, 0);
  }

  static Claim resumed(IdempotencyRecord record) {
    return new Claim(
        Ownership.of(record),
        record.recoveryPoint(),
        record.pendingExternal(),
        new HashMap<>(record.recoveryData()),
        true,
        record.recoveryAttempts());
  }
}
