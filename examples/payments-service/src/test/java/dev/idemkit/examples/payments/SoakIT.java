package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.demo.EmbeddedMail;
import dev.idemkit.examples.payments.demo.EmbeddedProvider;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.test.context.TestPropertySource;

/**
 * The soak: 2,000 payments (system property {@code soak.payments}) and 200 paid orders from 16
 * concurrent clients that retry with the same key until they get a final answer, while 20% of
 * provider calls fail at random (dropped after charging, answered after the timeout, 503 before
 * charging, declined, slow), 5% of the relay's acknowledgements are lost after delivery, consumers
 * fail after writing 5% of the time, and the mail service drops 5% of its answers after sending and
 * refuses 5% with a 503. Then: charges equal completed payments, no payment is charged twice, no
 * record is left unknown once recovery has run; and once the events have drained, ledger entries
 * are twice the completed payments with debits equal to credits, each receipt mail was delivered
 * exactly once at the mail service, shipments equal paid orders, nothing is parked and nothing is
 * left unsent. Prints the counts.
 */
@TestPropertySource(
    properties = {
      "payments.provider.faults=drop-after-charge:0.05,timeout-after-charge:0.05,"
          + "error-before-charge:0.05,decline:0.02,latency:0.03",
      "payments.provider.timeout=PT1S",
      "idemkit.cleanup.interval=PT1S",
      "idemkit.cleanup.batch-size=200",
      "idemkit.cleanup.pause=PT0.01S",
      "idemkit.cleanup.body-retention=PT0S",
      "idemkit.cleanup.metadata-retention=PT0S",
      "payments.events.faults.lost-ack=0.05",
      "payments.events.faults.consumer-failure=0.05",
      "payments.events.initial-backoff=PT0.1S",
      "payments.events.max-backoff=PT1S",
      "payments.mail.faults=drop-after-accept:0.05,unavailable:0.05"
    })
class SoakIT extends HttpTestSupport {

  @Autowired DataSourceProperties database;
  @Autowired EmbeddedMail mail;

  private static final int CLIENTS = 16;

  /** How many payments the soak makes (system property {@code soak.payments}, default 2,000). */
  int payments() {
    return Integer.getInteger("soak.payments", 2000);
  }

  /** The paid orders: a tenth of the payments. */
  private int orders() {
    return payments() / 10;
  }

  /**
   * Whether every consumer has the events the relay sent. On the embedded transport a sent event is
   * one every consumer's inbox already has; a broker's transport acknowledges it before any
   * consumer read it (KafkaSoakIT waits for the consumers too).
   */
  boolean consumersCaughtUp() {
    return true;
  }

  /** What the printed counts start with. */
  String label() {
    return "SOAK";
  }

  private HttpRequest request(String key, String ref) {
    return HttpRequest.newBuilder(uri("/v1/payments"))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + TENANT_A)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(payment(ref, "10.00")))
        .build();
  }

  @Test
  void twoThousandPaymentsWithTwentyPercentProviderFaults() throws Exception {
    int paymentCount = payments();
    int orderCount = orders();
    String run = "soak-" + UUID.randomUUID().toString().substring(0, 8);
    // Cleanup runs beside the soak (short retentions): old, expired records for it to drop.
    int expired = 20_000;
    jdbc.sql(
            "insert into idemkit_record (tenant, operation, idem_key, fingerprint, state,"
                + " fencing_token, locked_until, response_status, response_body, created_at,"
                + " updated_at, expires_at) select 'tenant_old', 'create_payment', ? || g,"
                + " 'v1:sha256:old', 'COMPLETED', 1, now(), 201, convert_to('{}', 'UTF8'),"
                + " now() - interval '2 days', now() - interval '2 days',"
                + " now() - interval '1 day' from generate_series(1, ?) g")
        .params(run + "-old-", expired)
        .update();
    Map<Integer, Integer> finals = new ConcurrentHashMap<>();
    AtomicInteger attempts = new AtomicInteger();
    AtomicInteger retried = new AtomicInteger();
    List<String> paymentIds = java.util.Collections.synchronizedList(new ArrayList<>());
    long started = System.nanoTime();

    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    List<Future<?>> work = new ArrayList<>();
    for (int i = 0; i < paymentCount; i++) {
      String key = run + "-" + i;
      String ref = run + "-ref-" + i;
      work.add(
          clients.submit(
              () -> {
                long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                for (int attempt = 1; ; attempt++) {
                  attempts.incrementAndGet();
                  HttpResponse<String> r = send(request(key, ref));
                  int status = r.statusCode();
                  if (status == 201 || status == 402) {
                    finals.merge(status, 1, Integer::sum);
                    if (attempt > 1) {
                      retried.incrementAndGet();
                    }
                    if (status == 201) {
                      int at = r.body().indexOf("\"paymentId\":\"") + 13;
                      paymentIds.add(r.body().substring(at, at + 36));
                    }
                    return null;
                  }
                  assertThat(status).as(r.body()).isIn(409, 503);
                  assertThat(System.nanoTime())
                      .as("no final answer for " + key)
                      .isLessThan(deadline);
                  long wait = Long.parseLong(r.headers().firstValue("Retry-After").orElse("1"));
                  Thread.sleep(Math.min(wait, 2) * 250);
                }
              }));
    }
    List<String> orderIds = java.util.Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < orderCount; i++) {
      String key = run + "-order-" + i;
      work.add(
          clients.submit(
              () -> {
                String order =
                    untilFinal(
                        "/v1/orders",
                        key,
                        """
                        {"currency":"EUR","items":[{"sku":"soak","quantity":1,"unitPrice":"7.00"}]}""");
                int at = order.indexOf("\"orderId\":\"") + 11;
                String orderId = order.substring(at, at + 36);
                untilFinal(
                    "/v1/orders/" + orderId + "/confirm-payment",
                    key + "-confirm",
                    "{\"amount\":\"7.00\",\"currency\":\"EUR\"}");
                orderIds.add(orderId);
                return null;
              }));
    }
    for (Future<?> f : work) {
      f.get(10, TimeUnit.MINUTES);
    }
    clients.shutdown();
    double seconds = (System.nanoTime() - started) / 1e9;

    // Recovery has run for everything the clients saw finish; nothing of this run is left live.
    long live =
        jdbc.sql(
                "select count(*) from idemkit_record where idem_key like ? and state in"
                    + " ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY')")
            .param(run + "-%")
            .query(Long.class)
            .single();
    long completed =
        jdbc.sql(
                "select count(*) from payment where merchant_reference like ? and status = 'COMPLETED'")
            .param(run + "-ref-%")
            .query(Long.class)
            .single();
    long declined =
        jdbc.sql(
                "select count(*) from payment where merchant_reference like ? and status = 'DECLINED'")
            .param(run + "-ref-%")
            .query(Long.class)
            .single();
    long charges = 0;
    long chargedTwice = 0;
    try (Connection c =
            DriverManager.getConnection(
                EmbeddedProvider.withDatabase(
                    database.getUrl(), EmbeddedProvider.providerDatabase(database.getUrl())),
                database.getUsername(),
                database.getPassword());
        PreparedStatement ps =
            c.prepareStatement(
                "select count(*) from provider_charge where status = 'SUCCEEDED'"
                    + " and reference = any(?) group by reference")) {
      ps.setArray(1, c.createArrayOf("text", paymentIds.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          charges += rs.getLong(1);
          if (rs.getLong(1) > 1) {
            chargedTwice++;
          }
        }
      }
    }
    long declinedCharges =
        jdbc.sql(
                "select count(*) from payment where merchant_reference like ? and provider_charge_id is not null and status = 'DECLINED'")
            .param(run + "-ref-%")
            .query(Long.class)
            .single();

    System.out.printf(
        "%s payments=%d clients=%d seconds=%.1f attempts=%d retried_operations=%d answers_201=%d"
            + " answers_402=%d completed_payments=%d declined_payments=%d provider_charges=%d"
            + " charged_twice=%d records_left_live=%d%n",
        label(),
        paymentCount,
        CLIENTS,
        seconds,
        attempts.get(),
        retried.get(),
        finals.getOrDefault(201, 0),
        finals.getOrDefault(402, 0),
        completed,
        declined,
        charges,
        chargedTwice,
        live);

    assertThat(finals.getOrDefault(201, 0) + finals.getOrDefault(402, 0)).isEqualTo(paymentCount);
    assertThat(paymentIds).doesNotHaveDuplicates().hasSize(finals.getOrDefault(201, 0));
    assertThat(completed).isEqualTo((long) finals.getOrDefault(201, 0));
    assertThat(declined).isEqualTo((long) finals.getOrDefault(402, 0));
    assertThat(charges).as("charges == completed payments").isEqualTo(completed);
    assertThat(chargedTwice).isZero();
    assertThat(live).isZero();
    assertThat(retried.get()).as("faults really happened").isGreaterThan(paymentCount / 20);
    assertThat(declinedCharges).isEqualTo(declined);
    long oldLeft =
        jdbc.sql("select count(*) from idemkit_record where idem_key like ?")
            .param(run + "-old-%")
            .query(Long.class)
            .single();
    long soakRecords =
        jdbc.sql(
                "select count(*) from idemkit_record where operation = 'create_payment'"
                    + " and idem_key like ? and idem_key not like ?")
            .param(run + "-%")
            .param(run + "-old-%")
            .query(Long.class)
            .single();
    System.out.printf("%s cleanup: expired_records_left=%d of %d%n", label(), oldLeft, expired);
    assertThat(oldLeft).as("cleanup ran beside the soak").isLessThan(expired);
    assertThat(soakRecords)
        .as("no record of the soak's own window was dropped")
        .isEqualTo(paymentCount);

    assertEventsDrainedEndToEnd(run, paymentIds, orderIds);
  }

  /** Posts until a 2xx answer (a 409 or 503 is retried with the same key); returns the body. */
  private String untilFinal(String path, String key, String json) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (true) {
      HttpResponse<String> r = post(path, TENANT_A, key, json);
      if (r.statusCode() / 100 == 2) {
        return r.body();
      }
      assertThat(r.statusCode()).as(r.body()).isIn(409, 503);
      assertThat(System.nanoTime()).as("no final answer for " + key).isLessThan(deadline);
      Thread.sleep(250);
    }
  }

  long count(String sql, Object... params) {
    return jdbc.sql(sql).params(params).query(Long.class).single();
  }

  /**
   * Waits (up to 3 minutes) until every event is sent and every receipt mail delivered, then checks
   * each far end: the ledger, the mail service's counter per key, the shipments.
   */
  private void assertEventsDrainedEndToEnd(
      String run, List<String> paymentIds, List<String> orderIds) throws InterruptedException {
    String ref = run + "-ref-%";
    long completed =
        count(
            "select count(*) from payment where merchant_reference like ? and status = 'COMPLETED'",
            ref);
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (count("select count(*) from idemkit_outbox where sent_at is null") > 0
        || !consumersCaughtUp()
        || count("select count(*) from idemkit_delivery where status = 'PENDING'") > 0) {
      assertThat(System.nanoTime()).as("events drained").isLessThan(deadline);
      Thread.sleep(200);
    }
    long ledgerEntries =
        count(
            "select count(*) from ledger_entry l join payment p on p.id = l.source_payment_id"
                + " where p.merchant_reference like ?",
            ref);
    long unbalancedPayments =
        count(
            "select count(*) from (select l.source_payment_id from ledger_entry l"
                + " join payment p on p.id = l.source_payment_id where p.merchant_reference like ?"
                + " group by l.source_payment_id"
                + " having sum(case when l.direction = 'DEBIT' then l.amount else 0 end)"
                + " <> sum(case when l.direction = 'CREDIT' then l.amount else 0 end)) u",
            ref);
    long unbalancedBooks =
        count(
            "select count(*) from (select tenant_id, currency from ledger_entry"
                + " group by tenant_id, currency"
                + " having sum(case when direction = 'DEBIT' then amount else 0 end)"
                + " <> sum(case when direction = 'CREDIT' then amount else 0 end)) u");
    long mailsDeliveredOnce = 0;
    long mailRequests = 0;
    for (String id : paymentIds) {
      String key = "receipt_payment_" + id;
      if (mail.simulator().delivered(key) == 1) {
        mailsDeliveredOnce++;
      }
      mailRequests += mail.simulator().requests(key);
    }
    long paidOrders =
        count(
            "select count(*) from shop_order where status = 'PAID' and id = any(?::uuid[])",
            (Object) orderIds.toArray(new String[0]));
    long shipments =
        count(
            "select count(*) from shipment where order_id = any(?::uuid[])",
            (Object) orderIds.toArray(new String[0]));
    long relayRetries = count("select count(*) from idemkit_outbox where attempts > 0");
    long parkedEvents = count("select count(*) from idemkit_outbox where parked_at is not null");
    long parkedMessages = count("select count(*) from idemkit_inbox where status = 'PARKED'");
    long parkedMails = count("select count(*) from idemkit_delivery where status = 'PARKED'");
    long unsent = count("select count(*) from idemkit_outbox where sent_at is null");
    long held = count("select count(*) from idemkit_inbox where status = 'HELD'");

    System.out.printf(
        "%s-EVENTS completed_payments=%d ledger_entries=%d unbalanced_payments=%d"
            + " unbalanced_books=%d receipts_delivered_once=%d mail_requests=%d paid_orders=%d"
            + " shipments=%d events_retried_by_relay=%d parked_events=%d parked_messages=%d"
            + " parked_mails=%d unsent=%d held=%d%n",
        label(),
        completed,
        ledgerEntries,
        unbalancedPayments,
        unbalancedBooks,
        mailsDeliveredOnce,
        mailRequests,
        paidOrders,
        shipments,
        relayRetries,
        parkedEvents,
        parkedMessages,
        parkedMails,
        unsent,
        held);

    assertThat(ledgerEntries)
        .as("ledger entries = 2 x completed payments")
        .isEqualTo(2 * completed);
    assertThat(unbalancedPayments).as("each payment's debits = credits").isZero();
    assertThat(unbalancedBooks).as("each tenant's debits = credits, per currency").isZero();
    assertThat(mailsDeliveredOnce)
        .as("each receipt delivered exactly once at the mail service")
        .isEqualTo(completed);
    assertThat(mailRequests).as("mail faults really happened").isGreaterThan(completed);
    assertThat(paidOrders).isEqualTo(orders());
    assertThat(shipments).as("shipments = paid orders").isEqualTo(paidOrders);
    assertThat(relayRetries).as("relay faults really happened").isPositive();
    assertThat(parkedEvents + parkedMessages + parkedMails).as("nothing parked").isZero();
    assertThat(unsent).isZero();
    assertThat(held).as("nothing held behind a gap").isZero();
  }
}
