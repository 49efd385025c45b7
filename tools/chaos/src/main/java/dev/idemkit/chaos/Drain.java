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

  /**
   * For a payment the flow did not finish: each of its outbox events in order, whether sent or
   * parked, its attempts and last error, and each consumer's inbox row for it. What the report
   * shows so an undrained run says where the flow stopped.
   */
  private static final String TRAIL =
      """
      select e.event_type, e.sequence, e.attempts,
             case when e.sent_at is not null then 'sent'
                  when e.parked_at is not null then 'PARKED' else 'unsent' end,
             left(e.last_error, 160),
             (select string_agg(i.consumer_name || ' ' || i.status || ' attempts=' || i.attempts
                                || coalesce(' error=' || left(i.last_error, 160), ''),
                                '; ' order by i.consumer_name)
                from idemkit_inbox i where i.message_id = e.event_id)
        from idemkit_outbox e
       where e.aggregate_id = ?
       order by e.sequence
      """;

  /** At most this many unfinished payments are traced in the report. */
  private static final int TRACED = 3;

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
    if (!left.isEmpty()) {
      left.addAll(trails(cluster));
    }
    return left;
  }

  /**
   * The event trails of up to {@value #TRACED} completed payments missing their booking or their
   * receipt.
   */
  private static List<String> trails(Cluster cluster) throws Exception {
    List<String> trails = new ArrayList<>();
    try (Connection c = cluster.payments()) {
      List<String> unfinished = new ArrayList<>();
      Rows.each(
          c,
          "select p.id::text from payment p where p.status = 'COMPLETED' and ("
              + " not exists (select 1 from receipt r where r.payment_id = p.id)"
              + " or not exists (select 1 from ledger_entry l where l.source_payment_id = p.id))"
              + " order by p.created_at limit "
              + TRACED,
          rs -> unfinished.add(rs.getString(1)));
      for (String payment : unfinished) {
        StringBuilder trail = new StringBuilder("payment " + payment + ":");
        Rows.each(
            c,
            TRAIL,
            rs ->
                trail
                    .append(" [")
                    .append(rs.getString(1))
                    .append(" #")
                    .append(rs.getLong(2))
                    .append(' ')
                    .append(rs.getString(4))
                    .append(" attempts=")
                    .append(rs.getInt(3))
                    .append(rs.getString(5) == null ? "" : " error=" + rs.getString(5))
                    .append("; inbox: ")
                    .append(rs.getString(6) == null ? "none" : rs.getString(6))
                    .append(']'),
            payment);
        trails.add(trail.toString());
      }
    }
    return trails;
  }
}
