package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chaos run's ledger check on a real PostgreSQL: a ledger that books each completed payment
 * once is conserved, and each way of breaking it is reported, naming the payment or account.
 */
class LedgerConservationIT {

  @TempDir static Path dataDir;

  private static EmbeddedPostgres postgres;

  private Connection db;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = IdemkitDatabase.embeddedServer(dataDir, 20).start();
  }

  @AfterAll
  static void stopPostgres() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
  }

  /**
   * A fresh database with the two tables the check reads, as the service's migrations make them.
   */
  @BeforeEach
  void freshDatabase() throws Exception {
    String name = "ledger_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection admin = postgres.getPostgresDatabase().getConnection();
        Statement s = admin.createStatement()) {
      s.execute("create database " + name);
    }
    db = postgres.getDatabase("postgres", name).getConnection();
    sql(
        """
        create table payment (
            id                 uuid          primary key,
            tenant_id          text          not null,
            account_id         text          not null,
            amount             numeric(19,4) not null,
            currency           char(3)       not null,
            merchant_reference text          not null,
            status             text          not null);
        create table ledger_entry (
            id                bigserial     primary key,
            tenant_id         text          not null,
            account_id        text          not null,
            entry_type        text          not null,
            direction         text          not null check (direction in ('DEBIT', 'CREDIT')),
            amount            numeric(19,4) not null check (amount > 0),
            currency          char(3)       not null,
            source_payment_id uuid          not null,
            created_at        timestamptz   not null default now(),
            constraint ledger_entry_once unique (entry_type, source_payment_id));
        """);
  }

  @AfterEach
  void closeDatabase() throws Exception {
    db.close();
  }

  @Test
  void everyCompletedPaymentBookedOnceIsConserved() throws Exception {
    UUID paid = payment("COMPLETED", "10.00");
    book(paid, "10.00");
    UUID other = payment("COMPLETED", "2.50");
    book(other, "2.50");
    payment("DECLINED", "99.00");

    Accounting.Ledger ledger = LedgerConservation.check(db);

    assertThat(ledger.violations()).isEmpty();
    assertThat(ledger.entries()).isEqualTo(4);
    assertThat(ledger.summary()).startsWith("conserved").contains("t1 EUR 12.50");
  }

  @Test
  void aCompletedPaymentTheLedgerNeverBookedIsReported() throws Exception {
    book(payment("COMPLETED", "10.00"), "10.00");
    UUID unbooked = payment("COMPLETED", "5.00");

    Accounting.Ledger ledger = LedgerConservation.check(db);

    assertThat(ledger.summary()).startsWith("VIOLATED");
    assertThat(ledger.violations())
        .anyMatch(
            v -> v.startsWith("payment " + unbooked + " (COMPLETED, 5.00): 0 debits, 0 credits"))
        .anyMatch(
            v ->
                v.equals(
                    "account t1/acc_1 EUR: debits 10.00 booked, 15.00 owed by completed payments"))
        .anyMatch(
            v -> v.startsWith("account t1/merchant:t1 EUR: credits 10.00 booked, 15.00 owed"));
  }

  @Test
  void moneyBookedForAPaymentThatNeverCompletedIsReported() throws Exception {
    UUID declined = payment("DECLINED", "7.00");
    book(declined, "7.00");

    Accounting.Ledger ledger = LedgerConservation.check(db);

    assertThat(ledger.violations())
        .anyMatch(
            v -> v.startsWith("payment " + declined + " (DECLINED, 7.00): 1 debits, 1 credits"))
        .anyMatch(v -> v.startsWith("account t1/acc_1 EUR: debits 7.00 booked, 0.00 owed"));
  }

  @Test
  void aDebitWithoutItsCreditUnbalancesTheLedger() throws Exception {
    UUID half = payment("COMPLETED", "4.00");
    entry(half, "PAYMENT_DEBIT", "DEBIT", "acc_1", "4.00");

    Accounting.Ledger ledger = LedgerConservation.check(db);

    assertThat(ledger.violations())
        .contains("ledger t1 EUR: debits 4.00 <> credits 0.00")
        .anyMatch(v -> v.startsWith("payment " + half + " (COMPLETED, 4.00): 1 debits, 0 credits"));
  }

  @Test
  void aPaymentBookedTwiceOrWithAnotherAmountIsReported() throws Exception {
    UUID twice = payment("COMPLETED", "3.00");
    book(twice, "3.00");
    // A second pair under other entry types: the unique constraint cannot see it.
    entry(twice, "PAYMENT_DEBIT_AGAIN", "DEBIT", "acc_1", "3.00");
    entry(twice, "PAYMENT_CREDIT_AGAIN", "CREDIT", "merchant:t1", "3.00");
    UUID wrong = payment("COMPLETED", "8.00");
    book(wrong, "80.00");
    entry(UUID.randomUUID(), "PAYMENT_DEBIT", "DEBIT", "acc_1", "1.00");

    Accounting.Ledger ledger = LedgerConservation.check(db);

    assertThat(ledger.violations())
        .anyMatch(v -> v.startsWith("payment " + twice + " (COMPLETED, 3.00): 2 debits, 2 credits"))
        .anyMatch(
            v ->
                v.startsWith(
                    "payment "
                        + wrong
                        + " (COMPLETED, 8.00): 1 debits, 1 credits, 2 of another amount"))
        .contains("1 ledger entries for no payment");
  }

  private UUID payment(String status, String amount) throws Exception {
    UUID id = UUID.randomUUID();
    sql(
        "insert into payment values ('%s', 't1', 'acc_1', %s, 'EUR', 'ref-%s', '%s')"
            .formatted(id, amount, id, status));
    return id;
  }

  /** What the service's ledger consumer books for a completed payment. */
  private void book(UUID payment, String amount) throws Exception {
    entry(payment, "PAYMENT_DEBIT", "DEBIT", "acc_1", amount);
    entry(payment, "PAYMENT_CREDIT", "CREDIT", "merchant:t1", amount);
  }

  private void entry(UUID payment, String type, String direction, String account, String amount)
      throws Exception {
    sql(
        ("insert into ledger_entry (tenant_id, account_id, entry_type, direction, amount, currency,"
                + " source_payment_id) values ('t1', '%s', '%s', '%s', %s, 'EUR', '%s')")
            .formatted(account, type, direction, amount, payment));
  }

  private void sql(String statements) throws Exception {
    try (Statement s = db.createStatement()) {
      s.execute(statements);
    }
  }
}
