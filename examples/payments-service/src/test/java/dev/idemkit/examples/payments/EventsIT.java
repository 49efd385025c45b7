package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.demo.EmbeddedMail;
import dev.idemkit.examples.payments.demo.MailSimulator;
import dev.idemkit.examples.payments.events.Consumers;
import dev.idemkit.examples.payments.events.EventsProperties;
import dev.idemkit.examples.payments.receipts.ReceiptsConsumer;
import dev.idemkit.outbox.DeliverySender;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.spi.MessageReceiver;
import dev.idemkit.spring.boot.InboxCleanupWorker;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * What happens after a payment, over HTTP: the ledger books it, a receipt is mailed once, a paid
 * order is shipped once; tenants see their own only; operators see and re-queue what is parked.
 */
class EventsIT extends HttpTestSupport {

  static final String ADMIN = "sk_test_admin";

  @Autowired EmbeddedMail mail;
  @Autowired InboxCleanupWorker inboxCleanup;
  @Autowired javax.sql.DataSource dataSource;
  @Autowired EventsProperties events;
  @Autowired Consumers consumers;

  private HttpResponse<String> pay(String account, String fault) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/v1/payments"))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + TENANT_A)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", newKey())
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    """
                    {"accountId":"%s","amount":"12.50","currency":"EUR","merchantReference":"%s"}"""
                        .formatted(account, "ev-" + UUID.randomUUID())));
    if (fault != null) {
      b.header("X-Provider-Fault", fault);
    }
    return send(b.build());
  }

  private static String field(String json, String name) {
    int at = json.indexOf("\"" + name + "\":\"") + name.length() + 4;
    return json.substring(at, json.indexOf('"', at));
  }

  private String mailCount(String key) {
    return send(HttpRequest.newBuilder(URI.create(mail.baseUrl() + "/messages?key=" + key)).build())
        .body();
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  @Test
  void aCompletedPaymentIsBookedTwiceEquallyAndItsReceiptMailedOnce() throws Exception {
    String account = "acc_" + UUID.randomUUID();
    HttpResponse<String> paid = pay(account, null);
    assertThat(paid.statusCode()).as(paid.body()).isEqualTo(201);
    String paymentId = field(paid.body(), "paymentId");
    String key = "receipt_payment_" + paymentId;

    await(
        "the ledger books it",
        () ->
            get("/v1/payments/" + paymentId + "/ledger-entries", TENANT_A)
                .body()
                .contains("PAYMENT_CREDIT"));
    String entries = get("/v1/payments/" + paymentId + "/ledger-entries", TENANT_A).body();
    assertThat(entries)
        .contains("\"entryType\":\"PAYMENT_DEBIT\"", "\"direction\":\"DEBIT\"")
        .contains("\"entryType\":\"PAYMENT_CREDIT\"", "\"direction\":\"CREDIT\"")
        .contains("\"accountId\":\"" + account + "\"");
    assertThat(
            jdbc.sql("select count(*) from ledger_entry where source_payment_id = ?::uuid")
                .param(paymentId)
                .query(Long.class)
                .single())
        .isEqualTo(2);
    assertThat(get("/v1/accounts/" + account + "/balance", TENANT_A).body())
        .contains("\"debits\":\"12.50\"", "\"credits\":\"0.00\"", "\"balance\":\"-12.50\"");

    await(
        "the receipt is sent",
        () ->
            mail.simulator().delivered(key) == 1
                && get("/v1/receipts?paymentId=" + paymentId, TENANT_A).body().contains("SENT"));
    assertThat(mailCount(key)).isEqualTo("{\"delivered\":1,\"requests\":1}");
    assertThat(get("/v1/receipts?paymentId=" + paymentId, TENANT_A).body())
        .contains("\"deliveryKey\":\"" + key + "\"", "\"status\":\"SENT\"");

    // Another tenant sees none of it.
    assertThat(get("/v1/payments/" + paymentId + "/ledger-entries", TENANT_B).statusCode())
        .isEqualTo(404);
    assertThat(get("/v1/accounts/" + account + "/balance", TENANT_B).statusCode()).isEqualTo(404);
    HttpResponse<String> foreignReceipts = get("/v1/receipts?paymentId=" + paymentId, TENANT_B);
    assertThat(foreignReceipts.statusCode()).isEqualTo(404);
    assertThat(foreignReceipts.body()).contains("PAYMENT_NOT_FOUND").doesNotContain(key);
  }

  @Test
  void aDeclinedPaymentEmitsPaymentDeclinedAndIsNeitherBookedNorReceipted() throws Exception {
    HttpResponse<String> declined = pay("acc_" + UUID.randomUUID(), "decline");
    assertThat(declined.statusCode()).as(declined.body()).isEqualTo(402);
    String paymentId = field(declined.body(), "paymentId");

    await(
        "its events are sent",
        () ->
            jdbc.sql(
                        "select count(*) from idemkit_outbox where aggregate_id = ? and sent_at is not null")
                    .param(paymentId)
                    .query(Long.class)
                    .single()
                == 2);
    assertThat(
            jdbc.sql(
                    "select string_agg(event_type, ',' order by sequence) from idemkit_outbox"
                        + " where aggregate_id = ?")
                .param(paymentId)
                .query(String.class)
                .single())
        .isEqualTo("PaymentCreated,PaymentDeclined");
    assertThat(get("/v1/payments/" + paymentId + "/ledger-entries", TENANT_A).body())
        .contains("\"entries\":[]");
    assertThat(get("/v1/receipts?paymentId=" + paymentId, TENANT_A).body())
        .isEqualTo("{\"receipts\":[]}");
  }

  @Test
  void aMailDroppedAfterTheServiceAcceptedItIsRetriedAndDeliveredOnce() throws Exception {
    mail.simulator().failNext(MailSimulator.Fault.DROP_AFTER_ACCEPT, 1);
    HttpResponse<String> paid = pay("acc_" + UUID.randomUUID(), null);
    String key = "receipt_payment_" + field(paid.body(), "paymentId");

    await(
        "the receipt is marked sent",
        () ->
            jdbc.sql(
                        "select count(*) from idemkit_delivery where delivery_key = ? and status = 'DELIVERED'")
                    .param(key)
                    .query(Long.class)
                    .single()
                == 1);
    assertThat(mail.simulator().requests(key)).isEqualTo(2);
    assertThat(mailCount(key)).isEqualTo("{\"delivered\":1,\"requests\":2}");
  }

  /**
   * A receipt whose mail was parked shows {@code PARKED}, not {@code PENDING}, to its tenant; once
   * an operator re-queues it, it is sent once. The park is planted right after the mail service's
   * first 503 (the sender parks after {@code delivery-max-attempts}, ten by default, which
   * DeliveriesIT proves), before the sender's retry a second later.
   */
  @Test
  void aParkedReceiptSaysSoAndIsSentOnceWhenReQueued() throws Exception {
    mail.simulator().failNext(MailSimulator.Fault.UNAVAILABLE, 1);
    HttpResponse<String> paid = pay("acc_" + UUID.randomUUID(), null);
    String paymentId = field(paid.body(), "paymentId");
    String key = "receipt_payment_" + paymentId;
    await(
        "the mail's first attempt failed, and the delivery is parked",
        () ->
            jdbc.sql(
                        """
                        update idemkit_delivery set status = 'PARKED'
                         where delivery_key = ? and status = 'PENDING' and attempts = 1
                        """)
                    .param(key)
                    .update()
                == 1);

    String receipts = get("/v1/receipts?paymentId=" + paymentId, TENANT_A).body();
    assertThat(receipts).contains("\"status\":\"PARKED\"", "\"attempts\":1");
    assertThat(mail.simulator().requests(key)).isZero();

    assertThat(
            post("/v1/admin/events/deliveries/parked/" + key + "/requeue", ADMIN, null, "{}")
                .statusCode())
        .isEqualTo(200);
    await(
        "the re-queued receipt is sent",
        () -> get("/v1/receipts?paymentId=" + paymentId, TENANT_A).body().contains("SENT"));
    assertThat(mailCount(key)).isEqualTo("{\"delivered\":1,\"requests\":1}");
  }

  /**
   * The backlog endpoint counts every parked delivery: 1,001 parked mails (planted, on a channel of
   * their own that no sender serves) are 1,001 more, not a listing's first thousand.
   */
  @Test
  void operatorsSeeEveryParkedDeliveryCounted() throws Exception {
    long before = parkedDeliveries();
    try {
      jdbc.sql(
              """
              insert into idemkit_delivery (delivery_key, channel, payload, status, attempts,
                                            created_at, next_attempt_at, last_error)
              select 'test_parked_' || i, 'test-parked', '{}', 'PARKED', 10, now(), now(),
                     'mail service down'
                from generate_series(1, 1001) as i
              """)
          .update();

      assertThat(parkedDeliveries()).isEqualTo(before + 1001);
    } finally {
      jdbc.sql("delete from idemkit_delivery where channel = 'test-parked'").update();
    }
    assertThat(parkedDeliveries()).isEqualTo(before);
  }

  private long parkedDeliveries() {
    HttpResponse<String> backlog = get("/v1/admin/events/outbox", ADMIN);
    assertThat(backlog.statusCode()).isEqualTo(200);
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"parkedDeliveries\":(\\d+)").matcher(backlog.body());
    assertThat(m.find()).as(backlog.body()).isTrue();
    return Long.parseLong(m.group(1));
  }

  @Test
  void aPaidOrderGetsOneShipmentWhateverTheConfirmations() throws Exception {
    HttpResponse<String> order =
        post(
            "/v1/orders",
            TENANT_A,
            newKey(),
            """
            {"currency":"EUR","items":[{"sku":"book","quantity":2,"unitPrice":"10.00"}]}""");
    assertThat(order.statusCode()).as(order.body()).isEqualTo(201);
    String orderId = field(order.body(), "orderId");
    HttpResponse<String> notYet = get("/v1/orders/" + orderId + "/shipment", TENANT_A);
    assertThat(notYet.statusCode()).isEqualTo(404);
    assertThat(notYet.body()).contains("SHIPMENT_NOT_FOUND");

    String confirm = "{\"amount\":\"20.00\",\"currency\":\"EUR\"}";
    assertThat(
            post("/v1/orders/" + orderId + "/confirm-payment", TENANT_A, newKey(), confirm)
                .statusCode())
        .isEqualTo(200);
    assertThat(
            post("/v1/orders/" + orderId + "/confirm-payment", TENANT_A, newKey(), confirm)
                .statusCode())
        .isEqualTo(200);

    await(
        "the shipment is requested",
        () -> get("/v1/orders/" + orderId + "/shipment", TENANT_A).statusCode() == 200);
    assertThat(get("/v1/orders/" + orderId + "/shipment", TENANT_A).body())
        .contains("\"status\":\"REQUESTED\"");
    // Another tenant's order, like one that does not exist, is no order at all (not "not yet").
    HttpResponse<String> foreign = get("/v1/orders/" + orderId + "/shipment", TENANT_B);
    assertThat(foreign.statusCode()).isEqualTo(404);
    assertThat(foreign.body()).contains("ORDER_NOT_FOUND");
    assertThat(get("/v1/orders/" + UUID.randomUUID() + "/shipment", TENANT_A).body())
        .contains("ORDER_NOT_FOUND");
    assertThat(
            jdbc.sql(
                    "select count(*) from idemkit_outbox where aggregate_id = ?"
                        + " and event_type = 'OrderPaid'")
                .param(orderId)
                .query(Long.class)
                .single())
        .isEqualTo(1);
    assertThat(
            jdbc.sql("select count(*) from shipment where order_id = ?::uuid")
                .param(orderId)
                .query(Long.class)
                .single())
        .isEqualTo(1);
  }

  /**
   * A message parked in the shipping inbox (here planted: an OrderPaid whose handling failed five
   * times) is listed for operators and, re-queued, applied once.
   */
  @Test
  void operatorsSeeParkedMessagesAndRequeueThem() throws Exception {
    String orderId = UUID.randomUUID().toString();
    String messageId = UUID.randomUUID().toString();
    jdbc.sql(
            "insert into shop_order (id, tenant_id, currency, total, status, paid_at, created_at)"
                + " values (?::uuid, 'tenant_demo_a', 'EUR', 5, 'PAID', now(), now())")
        .param(orderId)
        .update();
    jdbc.sql(
            """
            insert into idemkit_inbox (consumer_name, message_id, status, attempts, received_at,
                last_error, event_type, tenant, aggregate_type, aggregate_id, sequence,
                occurred_at, payload)
            values ('shipping', ?::uuid, 'PARKED', 5, now(), 'carrier down', 'OrderPaid',
                'tenant_demo_a', 'order', ?, 1, now(), ?)
            """)
        .params(messageId, orderId, "{\"orderId\":\"" + orderId + "\"}")
        .update();

    assertThat(get("/v1/admin/events/inbox/parked", TENANT_A).statusCode()).isEqualTo(403);
    HttpResponse<String> parked = get("/v1/admin/events/inbox/parked", ADMIN);
    assertThat(parked.statusCode()).isEqualTo(200);
    assertThat(parked.body()).contains(messageId, "\"lastError\":\"carrier down\"");
    assertThat(get("/v1/admin/events/outbox", ADMIN).body()).contains("\"parkedMessages\":1");

    String requeue = "/v1/admin/events/inbox/shipping/parked/" + messageId + "/requeue";
    assertThat(post(requeue, TENANT_A, null, "{}").statusCode()).isEqualTo(403);
    HttpResponse<String> done = post(requeue, ADMIN, null, "{}");
    assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
    assertThat(done.body()).contains("\"outcome\":\"APPLIED\"");
    assertThat(post(requeue, ADMIN, null, "{}").statusCode()).isEqualTo(404);
    assertThat(get("/v1/orders/" + orderId + "/shipment", TENANT_A).statusCode()).isEqualTo(200);
    assertThat(get("/v1/admin/events/outbox", ADMIN).body()).contains("\"parkedMessages\":0");
  }

  /**
   * The starter's inbox cleanup covers the service's consumers: the messages of a payment that
   * every consumer processed longer ago than the inbox retention (14 days; here the rows are aged)
   * are forgotten by all of them, a recent payment's are kept.
   */
  @Test
  void theStartersInboxCleanupForgetsWhatTheConsumersProcessedBeforeTheRetention()
      throws Exception {
    assertThat(inboxCleanup.isRunning()).isTrue();
    String old = field(pay("acc_" + UUID.randomUUID(), null).body(), "paymentId");
    String recent = field(pay("acc_" + UUID.randomUUID(), null).body(), "paymentId");
    for (String paymentId : List.of(old, recent)) {
      await(
          "every event of " + paymentId + " is sent (every consumer acknowledged it)",
          () ->
              jdbc.sql(
                      "select count(*) filter (where sent_at is null) = 0 and count(*) > 0"
                          + " from idemkit_outbox where aggregate_id = ?")
                  .param(paymentId)
                  .query(Boolean.class)
                  .single());
    }
    String consumers =
        """
        select i.consumer_name from idemkit_inbox i join idemkit_outbox o
            on o.event_id = i.message_id
         where o.aggregate_id = ? and i.status = 'PROCESSED'
        """;
    List<String> recentBefore = jdbc.sql(consumers).param(recent).query(String.class).list();
    assertThat(jdbc.sql(consumers).param(old).query(String.class).list())
        .contains("ledger", "receipts", "shipping");
    jdbc.sql(
            """
            update idemkit_inbox set processed_at = now() - interval '15 days'
             where message_id in (select event_id from idemkit_outbox where aggregate_id = ?)
            """)
        .param(old)
        .update();

    // The worker's own schedule may be deleting them at this moment (its rows are then skipped
    // here, and counted by it): what matters is that they go, whichever run takes them.
    inboxCleanup.cleanUpOnce();
    await(
        "the old payment's processed ids are forgotten by every consumer",
        () -> jdbc.sql(consumers).param(old).query(String.class).list().isEmpty());
    assertThat(jdbc.sql(consumers).param(recent).query(String.class).list())
        .containsExactlyInAnyOrderElementsOf(recentBefore)
        .isNotEmpty();
  }

  /**
   * The mail sender deletes the receipt mails delivered longer ago than {@code
   * payments.events.delivery-retention} (14 days; here the row is aged): an old one goes, a recent
   * one stays, and so does a parked mail of any age.
   */
  @Test
  void deliveredReceiptMailsPastTheRetentionAreDeletedAndParkedOnesKept() throws Exception {
    String oldPayment = field(pay("acc_" + UUID.randomUUID(), null).body(), "paymentId");
    String old = "receipt_payment_" + oldPayment;
    String recent =
        "receipt_payment_" + field(pay("acc_" + UUID.randomUUID(), null).body(), "paymentId");
    String delivered =
        "select count(*) from idemkit_delivery where delivery_key = ? and status = 'DELIVERED'";
    for (String key : List.of(old, recent)) {
      await(
          "the receipt " + key + " is delivered",
          () -> jdbc.sql(delivered).param(key).query(Long.class).single() == 1);
    }
    String parked = "test_parked_mail_" + UUID.randomUUID();
    try {
      jdbc.sql(
              """
              insert into idemkit_delivery (delivery_key, channel, payload, status, attempts,
                                            created_at, next_attempt_at, last_error)
              values (?, 'mail', '{}', 'PARKED', 10, now() - interval '30 days',
                      now() - interval '30 days', 'mail service down')
              """)
          .param(parked)
          .update();
      jdbc.sql(
              "update idemkit_delivery set delivered_at = now() - interval '15 days'"
                  + " where delivery_key = ?")
          .param(old)
          .update();

      // The sender's own thread cleans up every minute and may be deleting it at this moment
      // (the row is then skipped here): what matters is that it goes, whichever run takes it.
      // A sender of the same channel and retention cleans up now, so the test need not wait.
      DeliverySender.builder(dataSource, ReceiptsConsumer.CHANNEL, (key, payload) -> {})
          .deliveredRetention(events.deliveryRetention())
          .build()
          .deleteDelivered();
      String any = "select count(*) from idemkit_delivery where delivery_key = ?";
      await(
          "the old receipt's mail record is deleted",
          () -> jdbc.sql(any).param(old).query(Long.class).single() == 0);
      assertThat(jdbc.sql(delivered).param(recent).query(Long.class).single()).isEqualTo(1);
      assertThat(jdbc.sql(any).param(parked).query(Long.class).single()).isEqualTo(1);
      // The receipt stays, and still reads sent (its mail's record is what went).
      assertThat(get("/v1/receipts?paymentId=" + oldPayment, TENANT_A).body())
          .contains("\"deliveryKey\":\"" + old + "\"", "\"status\":\"SENT\"");
    } finally {
      jdbc.sql("delete from idemkit_delivery where delivery_key = ?").param(parked).update();
    }
  }

  /**
   * A payment applied again to the receipts consumer after its inbox row and its mail's record were
   * both deleted (the retentions passed; here deleted outright) records no second mail: the
   * receipt, kept for good, answers it.
   */
  @Test
  void aPaymentAppliedAgainAfterItsMailRecordWasDeletedMailsNoMore() throws Exception {
    String paymentId = field(pay("acc_" + UUID.randomUUID(), null).body(), "paymentId");
    String key = "receipt_payment_" + paymentId;
    await(
        "the receipt is mailed",
        () ->
            jdbc.sql(
                        "select count(*) from idemkit_delivery where delivery_key = ? and status = 'DELIVERED'")
                    .param(key)
                    .query(Long.class)
                    .single()
                == 1);
    EventEnvelope completed =
        jdbc.sql(
                """
                select event_id, event_type, tenant, aggregate_type, aggregate_id, sequence,
                       occurred_at, payload
                  from idemkit_outbox where aggregate_id = ? and event_type = 'PaymentCompleted'
                """)
            .param(paymentId)
            .query(
                (rs, n) ->
                    new EventEnvelope(
                        rs.getObject("event_id", UUID.class),
                        rs.getString("event_type"),
                        rs.getString("tenant"),
                        rs.getString("aggregate_type"),
                        rs.getString("aggregate_id"),
                        rs.getLong("sequence"),
                        rs.getTimestamp("occurred_at").toInstant(),
                        rs.getString("payload")))
            .single();
    jdbc.sql("delete from idemkit_inbox where consumer_name = 'receipts' and message_id = ?")
        .param(completed.eventId())
        .update();
    jdbc.sql("delete from idemkit_delivery where delivery_key = ?").param(key).update();

    InboxConsumer receipts = consumers.byName().get(ReceiptsConsumer.NAME);
    assertThat(receipts.receive(completed)).isEqualTo(MessageReceiver.Received.APPLIED);

    assertThat(
            jdbc.sql("select count(*) from idemkit_delivery where delivery_key = ?")
                .param(key)
                .query(Long.class)
                .single())
        .isZero();
    assertThat(mailCount(key)).isEqualTo("{\"delivered\":1,\"requests\":1}");
  }
}
