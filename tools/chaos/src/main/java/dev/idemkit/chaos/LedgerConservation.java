package dev.idemkit.chaos;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Ledger conservation, read from the payments service's own tables once a run has settled. The
 * service books each completed payment as double entry ({@code LedgerConsumer}): a debit of the
 * payer's account and a credit of the tenant's merchant account ({@code merchant:<tenant>}), both
 * of the payment's amount. So, over the whole database:
 *
 * <ul>
 *   <li>per tenant and currency, debits = credits;
 *   <li>per account, the ledger holds exactly the completed payments behind it: a payer account's
 *       debits are the sum of its completed payments, a merchant account's credits the sum of its
 *       tenant's completed payments, and neither has entries of the other direction;
 *   <li>per payment, a completed payment has one debit and one credit of its amount, any other
 *       payment (declined, failed, unfinished) none; no entry names a payment that does not exist.
 * </ul>
 *
 * Money booked twice, booked for a payment that never completed, or never booked for one that did,
 * breaks one of these.
 */
final class LedgerConservation {

  /** At most this many violations of one kind are listed; the count is always complete. */
  private static final int LISTED = 20;

  private LedgerConservation() {}

  /** Debits and credits of each tenant's ledger, per currency. */
  private static final String PER_LEDGER =
      """
      select tenant_id, currency,
             coalesce(sum(amount) filter (where direction = 'DEBIT'), 0) as debits,
             coalesce(sum(amount) filter (where direction = 'CREDIT'), 0) as credits,
             count(*) as entries
        from ledger_entry
       group by tenant_id, currency
       order by tenant_id, currency
      """;

  /** Each account's booked totals against the completed payments behind it, where they differ. */
  private static final String PER_ACCOUNT =
      """
      with booked as (
        select tenant_id, account_id, currency, direction, sum(amount) as total
          from ledger_entry
         group by tenant_id, account_id, currency, direction),
      owed as (
        select tenant_id, account_id, currency, 'DEBIT' as direction, sum(amount) as total
          from payment
         where status = 'COMPLETED'
         group by tenant_id, account_id, currency
        union all
        select tenant_id, 'merchant:' || tenant_id, currency, 'CREDIT', sum(amount)
          from payment
         where status = 'COMPLETED'
         group by tenant_id, currency)
      select coalesce(b.tenant_id, o.tenant_id) as tenant_id,
             coalesce(b.account_id, o.account_id) as account_id,
             coalesce(b.currency, o.currency) as currency,
             coalesce(b.direction, o.direction) as direction,
             coalesce(b.total, 0) as booked,
             coalesce(o.total, 0) as owed
        from booked b
        full join owed o
          on o.tenant_id = b.tenant_id and o.account_id = b.account_id
         and o.currency = b.currency and o.direction = b.direction
       where coalesce(b.total, 0) <> coalesce(o.total, 0)
       order by 1, 2, 3, 4
      """;

  /**
   * Payments whose entries are not exactly one debit and one credit of their amount, if completed.
   */
  private static final String PER_PAYMENT =
      """
      select p.id::text as payment_id, p.status, p.amount,
             count(e.id) filter (where e.direction = 'DEBIT') as debits,
             count(e.id) filter (where e.direction = 'CREDIT') as credits,
             count(e.id) filter (where e.amount <> p.amount) as wrong_amounts
        from payment p
        left join ledger_entry e on e.source_payment_id = p.id
       group by p.id, p.status, p.amount
      having (p.status = 'COMPLETED'
              and (count(e.id) filter (where e.direction = 'DEBIT') <> 1
                   or count(e.id) filter (where e.direction = 'CREDIT') <> 1))
          or (p.status <> 'COMPLETED' and count(e.id) > 0)
          or count(e.id) filter (where e.amount <> p.amount) > 0
       order by p.id
      """;

  private static final String ORPHANS =
      """
      select count(*) from ledger_entry e
       where not exists (select 1 from payment p where p.id = e.source_payment_id)
      """;

  /** Completed payments the ledger has not booked yet (the consumer runs behind the outbox). */
  static final String UNBOOKED =
      """
      select count(*) from payment p
       where p.status = 'COMPLETED'
         and not exists (select 1 from ledger_entry e where e.source_payment_id = p.id)
      """;

  /** The verdict for the database {@code payments} is connected to. */
  static Accounting.Ledger check(Connection payments) throws SQLException {
    List<String> violations = new ArrayList<>();
    long[] entries = {0};
    List<String> totals = new ArrayList<>();
    Rows.each(
        payments,
        PER_LEDGER,
        rs -> {
          BigDecimal debits = rs.getBigDecimal("debits");
          BigDecimal credits = rs.getBigDecimal("credits");
          entries[0] += rs.getLong("entries");
          String ledger = rs.getString("tenant_id") + " " + rs.getString("currency");
          totals.add(ledger + " " + plain(debits));
          if (debits.compareTo(credits) != 0) {
            violations.add(
                "ledger " + ledger + ": debits " + plain(debits) + " <> credits " + plain(credits));
          }
        });
    int offAccounts =
        listFirst(
            payments,
            PER_ACCOUNT,
            "accounts",
            violations,
            rs ->
                String.format(
                    Locale.ROOT,
                    "account %s/%s %s: %s %s booked, %s owed by completed payments",
                    rs.getString("tenant_id"),
                    rs.getString("account_id"),
                    rs.getString("currency"),
                    rs.getString("direction").toLowerCase(Locale.ROOT) + "s",
                    plain(rs.getBigDecimal("booked")),
                    plain(rs.getBigDecimal("owed"))));
    int offPayments =
        listFirst(
            payments,
            PER_PAYMENT,
            "payments",
            violations,
            rs ->
                String.format(
                    Locale.ROOT,
                    "payment %s (%s, %s): %d debits, %d credits, %d of another amount",
                    rs.getString("payment_id"),
                    rs.getString("status"),
                    plain(rs.getBigDecimal("amount")),
                    rs.getLong("debits"),
                    rs.getLong("credits"),
                    rs.getLong("wrong_amounts")));
    long orphans = Rows.count(payments, ORPHANS);
    if (orphans > 0) {
      violations.add(orphans + " ledger entries for no payment");
    }
    String summary =
        violations.isEmpty()
            ? "conserved: "
                + entries[0]
                + " entries; debits = credits per tenant and currency ("
                + String.join(", ", totals)
                + "); every account and completed payment booked exactly once"
            : "VIOLATED: "
                + violations.size()
                + " finding(s) over "
                + entries[0]
                + " entries ("
                + offAccounts
                + " accounts and "
                + offPayments
                + " payments off)";
    return new Accounting.Ledger(summary, entries[0], List.copyOf(violations));
  }

  /** One row as a violation. */
  @FunctionalInterface
  private interface Violation {
    String describe(ResultSet row) throws SQLException;
  }

  /**
   * Adds the first {@link #LISTED} rows of {@code sql} to {@code violations} (and a line counting
   * the rest, which are {@code what}); answers how many rows there were.
   */
  private static int listFirst(
      Connection payments, String sql, String what, List<String> violations, Violation violation)
      throws SQLException {
    int[] rows = {0};
    Rows.each(
        payments,
        sql,
        rs -> {
          if (rows[0]++ < LISTED) {
            violations.add(violation.describe(rs));
          }
        });
    if (rows[0] > LISTED) {
      violations.add("… and " + (rows[0] - LISTED) + " more " + what);
    }
    return rows[0];
  }

  private static String plain(BigDecimal amount) {
    return amount.stripTrailingZeros().scale() < 2
        ? amount.setScale(2, RoundingMode.UNNECESSARY).toPlainString()
        : amount.stripTrailingZeros().toPlainString();
  }
}
