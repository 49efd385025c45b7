package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
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
 * A tenant holds at most {@code idemkit.quota.concurrent-requests-per-tenant} requests at once: one
 * more waits a second for a place, then is refused with 429 and stores nothing, while another
 * tenant is served.
 */
@TestPropertySource(
    properties = {
      "payments.api-keys.sk_test_bulk_a=tenant_bulk_a",
      "payments.api-keys.sk_test_bulk_b=tenant_bulk_b",
      "idemkit.quota.concurrent-requests-per-tenant=1",
      "payments.provider.embedded-port=0"
    })
@DirtiesContext
class TenantBulkheadIT extends HttpTestSupport {

  private static final String ORDER =
      "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"a\",\"quantity\":1,\"unitPrice\":\"5\"}]}";

  @Autowired DataSource dataSource;

  private long waitingOnLocks() {
    return jdbc.sql(
            "select count(*) from pg_stat_activity where wait_event_type = 'Lock'"
                + " and query like '%shop_order%'")
        .query(Long.class)
        .single();
  }

  @Test
  void aTenantOverItsPlacesIsRefusedWhileAnotherTenantIsServed() throws Exception {
    String held = newKey();
    String refusedKey = newKey();
    ExecutorService client = Executors.newSingleThreadExecutor();
    Future<HttpResponse<String>> first;
    HttpResponse<String> refused;
    HttpResponse<String> other;
    try (Connection lock = dataSource.getConnection()) {
      lock.setAutoCommit(false);
      try (Statement s = lock.createStatement()) {
        s.execute("lock table shop_order in exclusive mode");
      }
      // Tenant a's first order takes its one place and waits on the order table.
      first = client.submit(() -> post("/v1/orders", "sk_test_bulk_a", held, ORDER));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (waitingOnLocks() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(waitingOnLocks()).as("tenant a's first order waits on the lock").isEqualTo(1);

      refused = post("/v1/orders", "sk_test_bulk_a", refusedKey, ORDER);
      other = post("/v1/payments", "sk_test_bulk_b", newKey(), payment("bulk-" + newKey(), "4"));

      assertThat(first.isDone()).as("tenant a's first order still holds its place").isFalse();
      lock.rollback();
    } finally {
      client.shutdown();
    }

    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
    assertThat(refused.body())
        .contains("IDEMPOTENCY_QUOTA_EXCEEDED")
        .contains("requests running at once");
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(recordsFor(refusedKey)).isZero();
    assertThat(other.statusCode()).as(other.body()).isEqualTo(201);
    assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    assertThat(post("/v1/orders", "sk_test_bulk_a", refusedKey, ORDER).statusCode())
        .as("the refused key, retried once the place is free")
        .isEqualTo(201);
  }
}
