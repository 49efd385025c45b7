package dev.idemkit.chaos;

import dev.idemkit.chaos.History.Op;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Jepsen-style accounting of a finished run: each client operation's last word ({@code ok}, {@code
 * fail}, {@code info}) against the effects that really exist, read from the payments table, the
 * provider's own charges, the orders table, and the receipts: the service's {@code receipt} rows
 * and the mails the shared mail simulator delivered ({@code GET
 * /messages?key=receipt_payment_<id>}).
 *
 * <ul>
 *   <li><b>lost</b>: acknowledged ({@code ok}), no effect;
 *   <li><b>duplicated</b>: more than one effect for one operation (two payments or orders, or two
 *       successful provider charges);
 *   <li><b>unexpected</b>: an effect nobody asked for: for an operation the client was told failed
 *       ({@code fail}), for an operation never invoked, or a provider charge for no payment;
 *   <li><b>recovered</b>: unknown to the client ({@code info}), then found applied exactly once;
 *   <li><b>changed answers</b>: an operation whose key was answered with more than one status or
 *       body: its stored answer, the answer to the same request sent again after the run ({@link
 *       ClientProcess#askAgain}), and any other answer for that key must be one answer, whatever
 *       owner or replay gave it (a replay differs only in its {@code Idempotent-Replayed} header,
 *       which is not compared).
 * </ul>
 *
 * Receipts are counted per completed payment, after the run drained its events: one {@code receipt}
 * row and one mail delivered under its key is right; none is a <b>lost</b> receipt, more than one a
 * <b>duplicated</b> one, and a receipt row or mail for a payment that did not complete (or does not
 * exist) is <b>unexpected</b>. These findings are counted with the operations' own, one per
 * finding, and each is listed among the anomalies.
 *
 * <p>An effect is a completed payment with one successful provider charge, or an order. A payment
 * still unresolved after the run settled (charged but not completed, or completed with no charge)
 * is counted as {@code unresolved} and fails the run too, as does a ledger that is not conserved
 * ({@link LedgerConservation}).
 */
final class Accounting {

  /**
   * The verdict; {@link #valid()} when nothing was lost, duplicated, unexpected or unresolved, no
   * answer changed, and the ledger is conserved. {@code observed}: each operation id whose effect
   * exists, with the number of its effects (the final read of the EDN history, {@link
   * History#writeEdn}).
   */
  record Result(
      int operations,
      int ok,
      int fail,
      int info,
      int lost,
      int duplicated,
      int unexpected,
      int recovered,
      int unresolved,
      int receipts,
      Ledger ledger,
      List<String> anomalies,
      Map<String, Integer> observed,
      int changedAnswers) {

    boolean valid() {
      return lost == 0
          && duplicated == 0
          && unexpected == 0
          && unresolved == 0
          && changedAnswers == 0
          && ledger.violations().isEmpty();
    }
  }

  /**
   * The ledger's verdict: one line for the report, the entries it judged, and each violation found
   * (none: conserved).
   */
  record Ledger(String summary, long entries, List<String> violations) {}

  /**
   * The shared mail simulator: the mails it delivered under a key (its counter), and every key it
   * accepted a request for.
   */
  interface Mail {
    int delivered(String key) throws Exception;

    Set<String> keys() throws Exception;
  }

  /** One operation's effects as found in the databases and at the mail simulator. */
  private record Effects(
      int payments,
      int completed,
      int charges,
      int orders,
      int receipts,
      int mails,
      boolean inconsistent) {
    /** Money moved (charges), payments completed, orders placed; two payment rows are two. */
    int count() {
      return Math.max(Math.max(charges, completed), Math.max(orders, payments > 1 ? payments : 0));
    }
  }

  /** Ledger conservation, judged on the payments database after the run settled. */
  interface LedgerCheck {
    Ledger check(Connection payments) throws SQLException;

    /** The payments service's double-entry ledger ({@link LedgerConservation}). */
    LedgerCheck CONSERVATION = LedgerConservation::check;
  }

  private Accounting() {}

  static Result check(
      List<Op> history,
      Connection payments,
      Connection provider,
      Mail mail,
      String runTag,
      LedgerCheck ledger)
      throws Exception {
    Map<String, Op> last = new LinkedHashMap<>();
    Map<String, String> kind = new HashMap<>();
    for (Op op : history) {
      if (op.process() instanceof Integer && op.value().get("op") instanceof String id) {
        if (op.type().equals("invoke")) {
          kind.put(id, op.f());
        } else {
          last.put(id, op);
        }
      }
    }
    Map<String, Effects> effects = effects(payments, provider, mail, runTag);
    List<String> anomalies = new ArrayList<>();
    int ok = 0, fail = 0, info = 0, lost = 0, duplicated = 0, unexpected = 0, recovered = 0;
    int unresolved = 0, receipts = 0;
    for (Map.Entry<String, String> invoked : kind.entrySet()) {
      String id = invoked.getKey();
      Op end = last.get(id);
      String type = end == null ? "info" : end.type();
      Effects e = effects.getOrDefault(id, new Effects(0, 0, 0, 0, 0, 0, false));
      switch (type) {
        case "ok" -> ok++;
        case "fail" -> fail++;
        default -> info++;
      }
      if (e.inconsistent()) {
        unresolved++;
        anomalies.add("unresolved " + id + ": " + e);
      }
      if (e.count() > 1) {
        duplicated++;
        anomalies.add("duplicated " + id + " (" + type + "): " + e);
      } else if (type.equals("ok") && e.count() == 0) {
        lost++;
        anomalies.add("lost " + id + ": acknowledged, no effect");
      } else if (type.equals("fail") && e.count() > 0) {
        unexpected++;
        anomalies.add("unexpected " + id + ": failed (" + end.value() + ") but applied: " + e);
      } else if (type.equals("info") && e.count() == 1) {
        recovered++;
      }
      // The receipt of a payment: one row, one mail, for a completed payment only.
      if (e.completed() == 1) {
        if (e.receipts() == 0 || e.mails() == 0) {
          lost++;
          anomalies.add(
              "lost receipt " + id + ": payment completed, receipt never delivered: " + e);
        } else if (e.receipts() > 1 || e.mails() > 1) {
          duplicated++;
          anomalies.add("duplicated receipt " + id + ": " + e);
        } else {
          receipts++;
        }
      } else if (e.completed() == 0 && (e.receipts() > 0 || e.mails() > 0)) {
        unexpected++;
        anomalies.add("unexpected receipt " + id + ": for no completed payment: " + e);
      }
    }
    for (String id : effects.keySet()) {
      if (!kind.containsKey(id)) {
        unexpected++;
        anomalies.add("unexpected " + id + ": an effect for an operation never invoked");
      }
    }
    int changedAnswers = changedAnswers(history, anomalies);
    Map<String, Integer> observed = new TreeMap<>();
    effects.forEach(
        (id, e) -> {
          if (e.count() > 0) {
            observed.put(id, e.count());
          }
        });
    Ledger booked = ledger.check(payments);
    booked.violations().forEach(v -> anomalies.add("ledger: " + v));
    int orphanCharges = orphanCharges(payments, provider);
    if (orphanCharges > 0) {
      unexpected += orphanCharges;
      anomalies.add(orphanCharges + " provider charges for no payment");
    }
    int orphanMails = orphanMails(payments, mail, runTag);
    if (orphanMails > 0) {
      unexpected += orphanMails;
      anomalies.add(orphanMails + " receipt mails for no completed payment");
    }
    return new Result(
        kind.size(),
        ok,
        fail,
        info,
        lost,
        duplicated,
        unexpected,
        recovered,
        unresolved,
        receipts,
        booked,
        anomalies,
        observed,
        changedAnswers);
  }

  /**
   * The operations whose key got more than one answer (status and body digest), each listed among
   * the anomalies with its answers in the order given: every stored answer a client process was
   * told ({@code ok}, or a refusal the contract stores, {@link ClientProcess#STORED_REFUSAL}) and
   * every answer to the request sent again ({@link ClientProcess#ASKED_AGAIN}, {@code ok} or {@code
   * fail}).
   */
  static int changedAnswers(List<Op> history, List<String> anomalies) {
    Map<String, Set<String>> answers = new TreeMap<>();
    for (Op op : history) {
      boolean told =
          op.process() instanceof Integer
              && (op.type().equals("ok")
                  || (op.type().equals("fail")
                      && Integer.valueOf(ClientProcess.STORED_REFUSAL)
                          .equals(op.value().get("status"))));
      boolean askedAgain =
          ClientProcess.ASKED_AGAIN.equals(op.process()) && !op.type().equals("info");
      if ((told || askedAgain)
          && op.value().get("op") instanceof String id
          && op.value().get("digest") instanceof String digest) {
        answers
            .computeIfAbsent(id, k -> new LinkedHashSet<>())
            .add(op.value().get("status") + " " + digest.substring(0, 12));
      }
    }
    int changed = 0;
    for (Map.Entry<String, Set<String>> a : answers.entrySet()) {
      if (a.getValue().size() > 1) {
        changed++;
        anomalies.add("changed answer " + a.getKey() + ": " + String.join(", then ", a.getValue()));
      }
    }
    return changed;
  }

  private static Map<String, Effects> effects(
      Connection payments, Connection provider, Mail mail, String runTag) throws Exception {
    String thisRun = "op-" + runTag + "-%";
    Map<String, List<String>> paymentIds = new HashMap<>();
    Map<String, Integer> completed = new HashMap<>();
    Rows.each(
        payments,
        "select merchant_reference, id::text, status from payment where merchant_reference like ?",
        rs -> {
          paymentIds.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
          if ("COMPLETED".equals(rs.getString(3))) {
            completed.merge(rs.getString(1), 1, Integer::sum);
          }
        },
        thisRun);
    Map<String, Integer> orders =
        Rows.countsByKey(
            payments,
            "select sku, count(distinct order_id) from shop_order_item where sku like ? group by sku",
            thisRun);
    List<String> all = paymentIds.values().stream().flatMap(List::stream).toList();
    Map<String, Integer> chargesByPayment =
        perPayment(
            provider,
            all,
            "select reference, count(*) from provider_charge where status = 'SUCCEEDED'"
                + " and reference = any(?) group by reference");
    Map<String, Integer> receiptRows =
        perPayment(
            payments,
            all,
            "select payment_id::text, count(*) from receipt where payment_id::text = any(?)"
                + " group by payment_id");
    // The simulator's counter for every key it accepted a request for (no request: no mail).
    Set<String> accepted = mail.keys();
    Map<String, Integer> mails = new HashMap<>();
    for (String id : all) {
      String key = RECEIPT_KEY + id;
      if (accepted.contains(key)) {
        mails.put(id, mail.delivered(key));
      }
    }
    Map<String, Effects> out = new HashMap<>();
    Set<String> ops = new HashSet<>(paymentIds.keySet());
    ops.addAll(orders.keySet());
    for (String op : ops) {
      List<String> ids = paymentIds.getOrDefault(op, List.of());
      int charges = ids.stream().mapToInt(id -> chargesByPayment.getOrDefault(id, 0)).sum();
      int done = completed.getOrDefault(op, 0);
      int ordered = orders.getOrDefault(op, 0);
      // A settled payment is completed with its one charge, or not completed and never charged
      // (declined, failed before the charge); anything else did not settle.
      boolean inconsistent = done != charges;
      int receipts = ids.stream().mapToInt(id -> receiptRows.getOrDefault(id, 0)).sum();
      int mailed = ids.stream().mapToInt(id -> mails.getOrDefault(id, 0)).sum();
      out.put(op, new Effects(ids.size(), done, charges, ordered, receipts, mailed, inconsistent));
    }
    return out;
  }

  /** Counts by payment id, of the payments {@code ids}: {@code sql} takes them as a text array. */
  private static Map<String, Integer> perPayment(Connection db, List<String> ids, String sql)
      throws SQLException {
    return Rows.countsByKey(db, sql, db.createArrayOf("text", ids.toArray()));
  }

  /** A receipt mail's key at the mail service: {@code receipt_payment_<paymentId>}. */
  static final String RECEIPT_KEY = "receipt_payment_";

  /**
   * Receipt mails accepted for a payment that does not exist or did not complete, except this run's
   * own payments (judged per operation).
   */
  private static int orphanMails(Connection payments, Mail mail, String runTag) throws Exception {
    Set<String> known = new HashSet<>();
    Rows.each(
        payments,
        "select id::text from payment where status = 'COMPLETED' or merchant_reference like ?",
        rs -> known.add(RECEIPT_KEY + rs.getString(1)),
        "op-" + runTag + "-%");
    int orphans = 0;
    for (String key : mail.keys()) {
      if (!known.contains(key)) {
        orphans++;
      }
    }
    return orphans;
  }

  private static int orphanCharges(Connection payments, Connection provider) throws SQLException {
    Set<String> known = new HashSet<>();
    Rows.each(payments, "select id::text from payment", rs -> known.add(rs.getString(1)));
    List<String> charged = new ArrayList<>();
    Rows.each(
        provider,
        "select reference from provider_charge where status = 'SUCCEEDED'",
        rs -> charged.add(rs.getString(1)));
    return (int) charged.stream().filter(reference -> !known.contains(reference)).count();
  }
}
