package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * The database drops the service's connections ({@code pg_terminate_backend}, as an administrator,
 * a failover or a restart does) while clients pay. Every answer is the payment, 409 "in progress",
 * or 503 with {@code Retry-After}: never a 500, which a client that retries on 503 and 409 takes as
 * final. Retrying with the same key then pays each payment exactly once.
 */
@TestPropertySource(
    properties = {
      "spring.datasource.hikari.data-source-properties.ApplicationName="
          + StoreConnectionLossIT.APPLICATION,
      "idemkit.lease=PT2S"
    })
class StoreConnectionLossIT extends HttpTestSupport {

  static final String APPLICATION = "payments-connection-loss-it";

  private static final int CLIENTS = 8;
  private static final int PAYMENTS_PER_CLIENT = 6;

  /** One answer a client got. */
  private record Answer(int status, String retryAfter, String contentType, String body) {}

  @Test
  void lostConnectionsAnswer503WithRetryAfterAndRetriesPayOnce() throws Exception {
    int errorsBefore = ERRORS.size();
    ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
    List<String> references = new ArrayList<>();
    ConcurrentLinkedQueue<String> extra = new ConcurrentLinkedQueue<>();
    AtomicBoolean chaos = new AtomicBoolean(true);
    ExecutorService threads = Executors.newFixedThreadPool(CLIENTS + 1);
    try {
      Future<Integer> killer =
          threads.submit(
              () -> {
                int killed = 0;
                while (chaos.get()) {
                  try {
                    killed +=
                        jdbc.sql(
                                "select count(pg_terminate_backend(pid)) from pg_stat_activity"
                                    + " where application_name = ? and pid <> pg_backend_pid()")
                            .param(APPLICATION)
                            .query(Integer.class)
                            .single();
                  } catch (RuntimeException ownConnectionWasDropped) {
                    // the killer's pooled connection was one of the victims: next round
                  }
                  Thread.sleep(25);
                }
                return killed;
              });
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        List<String> mine = new ArrayList<>();
        for (int p = 0; p < PAYMENTS_PER_CLIENT; p++) {
          mine.add("conn-loss-" + UUID.randomUUID());
        }
        references.addAll(mine);
        clients.add(
            threads.submit(
                () -> {
                  go.await();
                  for (String reference : mine) {
                    payUntilAnswered(reference, answers);
                  }
                  while (chaos.get()) {
                    String more = "conn-loss-" + UUID.randomUUID();
                    extra.add(more);
                    payUntilAnswered(more, answers);
                  }
                  return null;
                }));
      }
      go.countDown();
      // The clients pay while the connections keep being dropped: at least 3 s, and until the
      // drops have met a request (on a loaded machine they can miss for a while), at most 30 s.
      long started = System.nanoTime();
      while (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(30)
          && (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(3)
              || answers.stream().allMatch(a -> a.status() == 201))) {
        Thread.sleep(100);
      }
      chaos.set(false);
      assertThat(killer.get(30, TimeUnit.SECONDS)).as("connections were terminated").isPositive();
      for (Future<?> client : clients) {
        client.get(180, TimeUnit.SECONDS);
      }
    } finally {
      chaos.set(false);
      threads.shutdownNow();
    }

    assertThat(answers).extracting(Answer::status).doesNotContain(500).isSubsetOf(201, 409, 503);
    assertThat(answers)
        .filteredOn(a -> a.status() != 201)
        .as("requests met dropped connections, and were told to retry")
        .isNotEmpty()
        .allSatisfy(
            a -> {
              assertThat(a.retryAfter()).as(a.body()).isNotNull();
              assertThat(a.contentType()).startsWith("application/problem+json");
            });
    assertThat(answers)
        .filteredOn(a -> a.status() == 503)
        .allSatisfy(
            a ->
                assertThat(a.body())
                    .containsAnyOf("IDEMPOTENCY_STORE_UNAVAILABLE", "OPERATION_INTERRUPTED"));
    references.addAll(extra);
    for (String reference : references) {
      assertThat(committedPayments(reference)).as(reference).isEqualTo(1);
    }
    // Spring's JdbcTransactionManager logs one ERROR of its own when a connection dies between a
    // transaction's commit and its rollback; Idemkit's own answers log at WARN, once.
    assertThat(ERRORS.subList(errorsBefore, ERRORS.size()))
        .as("nothing logged at ERROR but Spring's commit-then-rollback report")
        .allMatch(e -> e.contains("Commit exception overridden by rollback exception"));
  }

  /** Counted on the pool the chaos ran on: a connection dropped at the end is retried once. */
  private long committedPayments(String reference) {
    try {
      return paymentsFor(reference);
    } catch (RuntimeException droppedConnection) {
      return paymentsFor(reference);
    }
  }

  /** Sends one payment, retrying with the same key on 503 and 409, until it is answered 201. */
  private void payUntilAnswered(String reference, ConcurrentLinkedQueue<Answer> answers)
      throws InterruptedException {
    String key = newKey();
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (true) {
      HttpResponse<String> r = post("/v1/payments", TENANT_A, key, payment(reference, "10.00"));
      answers.add(
          new Answer(
              r.statusCode(),
              r.headers().firstValue("Retry-After").orElse(null),
              r.headers().firstValue("Content-Type").orElse(""),
              r.body()));
      if (r.statusCode() != 503 && r.statusCode() != 409) {
        return;
      }
      assertThat(System.nanoTime()).as("%s answered in 90 s", reference).isLessThan(deadline);
      Thread.sleep(200);
    }
  }
}
