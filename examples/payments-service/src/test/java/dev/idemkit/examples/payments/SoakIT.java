package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

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
 * The soak: 2,000 payments (system property {@code soak.payments}) from 16 concurrent clients that
 * retry with the same key until they get a final answer, while 20% of provider calls fail at random
 * (dropped after charging, answered after the timeout, 503 before charging, declined, slow). Then:
 * charges equal completed payments, no payment is charged twice, and no record is left unknown once
 * recovery has run. Prints the counts.
 */
@TestPropertySource(
    properties = {
      "payments.provider.faults=drop-after-charge:0.05,timeout-after-charge:0.05,"
          + "error-before-charge:0.05,decline:0.02,latency:0.03",
      "payments.provider.timeout=PT1S"
    })
class SoakIT extends HttpTestSupport {

  @Autowired DataSourceProperties database;

  private static final int PAYMENTS = Integer.getInteger("soak.payments", 2000);
  private static final int CLIENTS = 16;

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
    String run = "soak-" + UUID.randomUUID().toString().substring(0, 8);
    Map<Integer, Integer> finals = new ConcurrentHashMap<>();
    AtomicInteger attempts = new AtomicInteger();
    AtomicInteger retried = new AtomicInteger();
    List<String> paymentIds = java.util.Collections.synchronizedList(new ArrayList<>());
    long started = System.nanoTime();

    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    List<Future<?>> work = new ArrayList<>();
    for (int i = 0; i < PAYMENTS; i++) {
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
                EmbeddedProvider.withDatabase(database.getUrl(), "provider"),
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
        "SOAK payments=%d clients=%d seconds=%.1f attempts=%d retried_operations=%d answers_201=%d"
            + " answers_402=%d completed_payments=%d declined_payments=%d provider_charges=%d"
            + " charged_twice=%d records_left_live=%d%n",
        PAYMENTS,
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

    assertThat(finals.getOrDefault(201, 0) + finals.getOrDefault(402, 0)).isEqualTo(PAYMENTS);
    assertThat(paymentIds).doesNotHaveDuplicates().hasSize(finals.getOrDefault(201, 0));
    assertThat(completed).isEqualTo((long) finals.getOrDefault(201, 0));
    assertThat(declined).isEqualTo((long) finals.getOrDefault(402, 0));
    assertThat(charges).as("charges == completed payments").isEqualTo(completed);
    assertThat(chargedTwice).isZero();
    assertThat(live).isZero();
    assertThat(retried.get()).as("faults really happened").isGreaterThan(PAYMENTS / 20);
    assertThat(declinedCharges).isEqualTo(declined);
  }
}
