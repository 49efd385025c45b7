package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * A tenant's new keys over its quota are refused with 429 and store nothing, under a flood, and
 * once its quota is full before any business statement.
 */
@TestPropertySource(
    properties = {
      "payments.api-keys.sk_test_quota=tenant_quota",
      "payments.api-keys.sk_test_quota_full=tenant_quota_full",
      "idemkit.quota.new-keys-per-minute-per-tenant=5",
      "payments.provider.embedded-port=0"
    })
@DirtiesContext
class QuotaIT extends HttpTestSupport {

  private static final String QUOTA_TENANT = "sk_test_quota";
  private static final String ORDER =
      "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"a\",\"quantity\":1,\"unitPrice\":\"5\"}]}";

  @Autowired DataSource dataSource;

  private long orders(String tenant) {
    return jdbc.sql("select count(*) from shop_order where tenant_id = ?")
        .param(tenant)
        .query(Long.class)
        .single();
  }

  @Test
  void aFloodOfNewKeysGetsTheQuotaAnd429sThatStoreNothing() throws Exception {
    if (LocalTime.now().getSecond() > 45) {
      Thread.sleep((61 - LocalTime.now().getSecond()) * 1000L); // one minute's counter
    }
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      keys.add(newKey());
    }

    List<HttpResponse<String>> answers = race(keys);

    List<HttpResponse<String>> refused =
        answers.stream().filter(r -> r.statusCode() == 429).toList();
    assertThat(answers.stream().filter(r -> r.statusCode() == 201)).hasSize(5);
    assertThat(refused).hasSize(25);
    assertThat(refused)
        .allSatisfy(
            r -> {
              assertThat(r.body()).contains("IDEMPOTENCY_QUOTA_EXCEEDED");
              assertThat(r.headers().firstValue("Retry-After")).isPresent();
            });
    assertThat(orders("tenant_quota")).isEqualTo(5);
    long stored = keys.stream().filter(k -> recordsFor(k) > 0).count();
    assertThat(stored).as("records only for admitted keys").isEqualTo(5);
    String admittedKey =
        keys.get(
            answers.indexOf(answers.stream().filter(r -> r.statusCode() == 201).findFirst().get()));
    assertThat(post("/v1/orders", QUOTA_TENANT, admittedKey, ORDER).statusCode())
        .as("a retry of an existing key is never refused")
        .isEqualTo(201);
  }

  @Test
  void aTenantWhoseQuotaIsFullIsRefusedBeforeAnyBusinessStatement() throws Exception {
    String tenant = "sk_test_quota_full";
    if (LocalTime.now().getSecond() > 45) {
      Thread.sleep((61 - LocalTime.now().getSecond()) * 1000L); // one minute's counter
    }
    List<String> admitted = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      String key = newKey();
      assertThat(post("/v1/orders", tenant, key, ORDER).statusCode()).isEqualTo(201);
      admitted.add(key);
    }
    String refusedKey = newKey();
    ExecutorService client = Executors.newSingleThreadExecutor();
    HttpResponse<String> refused;
    // The order table locked against writes: a request that ran the order's insert would wait
    // here until the lock goes. The refusal comes while it is held: no business statement ran.
    try (Connection lock = dataSource.getConnection()) {
      lock.setAutoCommit(false);
      try (Statement s = lock.createStatement()) {
        s.execute("lock table shop_order in exclusive mode");
      }
      Future<HttpResponse<String>> answer =
          client.submit(() -> post("/v1/orders", tenant, refusedKey, ORDER));
      refused = answer.get(20, TimeUnit.SECONDS);
      lock.rollback();
    } finally {
      client.shutdownNow();
    }

    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
    assertThat(refused.body()).contains("IDEMPOTENCY_QUOTA_EXCEEDED");
    assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    assertThat(recordsFor(refusedKey)).isZero();
    assertThat(orders("tenant_quota_full")).isEqualTo(5);
    HttpResponse<String> retry = post("/v1/orders", tenant, admitted.get(0), ORDER);
    assertThat(retry.statusCode()).as("a retry of an existing key is never refused").isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
  }

  private List<HttpResponse<String>> race(List<String> keys) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(keys.size());
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<HttpResponse<String>>> futures = new ArrayList<>();
      for (String key : keys) {
        futures.add(
            pool.submit(
                () -> {
                  go.await();
                  return post("/v1/orders", QUOTA_TENANT, key, ORDER);
                }));
      }
      go.countDown();
      List<HttpResponse<String>> answers = new ArrayList<>();
      for (Future<HttpResponse<String>> f : futures) {
        answers.add(f.get(60, TimeUnit.SECONDS));
      }
      return answers;
    } finally {
      pool.shutdownNow();
    }
  }
}
