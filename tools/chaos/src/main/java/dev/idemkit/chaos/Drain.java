package dev.idemkit.chaos;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The drain before the accounting: waits until no record is in progress or awaiting recovery (the
 * recovery workers finish what the faults interrupted; their leases are 3 s), then until the event
 * flow is empty: every outbox event sent, no inbox message waiting to come again, every completed
 * payment booked by the ledger and given a receipt, every receipt mail delivered (or parked).
 */
final class Drain {

  /** How long the drain may take before the run counts as inconclusive. */
  static final Duration MAX = Duration.ofSeconds(60);

  /** What must be empty before the accounting, in this order, each with its name in the report. */
  private static final List<Map.Entry<String, String>> PENDING =
      List.of(
          Map.entry(
              "records in progress or awaiting recovery",
              "select count(*) from idemkit_record"
                  + " where state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')"),
          Map.entry(
              "outbox events unsent",
              "select count(*) from idemkit_outbox where sent_at is null and parked_at is null"),
          Map.entry(
              "inbox messages failed, to come again",
              "select count(*) from idemkit_inbox where status = 'FAILED'"),
          Map.entry("completed payments not booked", LedgerConservation.UNBOOKED),
          Map.entry(
              "completed payments without a receipt",
              "select count(*) from payment p where p.status = 'COMPLETED'"
                  + " and not exists (select 1 from receipt r where r.payment_id = p.id)"),
          Map.entry(
              "receipt mails pending",
              "select count(*) from idemkit_delivery where status = 'PENDING'"));

  private Drain() {}

  /** Drains; answers what did not drain within {@code max} (empty: all of it), with counts. */
  static List<String> await(Cluster cluster, Duration max) throws Exception {
    long deadline = System.nanoTime() + max.toNanos();
    List<String> left = new ArrayList<>();
    for (Map.Entry<String, String> pending : PENDING) {
      long n;
      while (true) {
        try (Connection c = cluster.payments()) {
          n = Rows.count(c, pending.getValue());
        }
        if (n == 0 || System.nanoTime() > deadline) {
          break;
        }
        Thread.sleep(500);
      }
      if (n > 0) {
        left.add(n + " " + pending.getKey());
      }
    }
    return left;
  }
}
