package dev.idemkit.examples.payments.erasure;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A tenant's erasure beyond its stored answers: deletes, in one transaction, every row the service
 * keeps of the tenant's business and events. Crypto-shredding makes the idempotency records'
 * answers unreadable, but payments, orders, ledger entries, receipts and shipments, and the
 * payloads of the tenant's events and receipt mails, are the service's own tables, in the clear.
 *
 * <p>What stays, and why: the tenant's idempotency records (scope, key, times, status and a keyed
 * fingerprint, their answers unreadable once shredded), so that a retry of one of its keys answers
 * 410 and never runs again; cleanup deletes them after their window and metadata retention. What
 * other systems hold (the payment provider's charges, mails already sent) is theirs to erase.
 */
@Component
public class TenantErasure {

  /**
   * The service's tables whose rows belong to a tenant, each by its {@code tenant_id} column,
   * parents first: what an erasure deletes (children first) and what a move to another shard copies
   * ({@code shards/ShardsConfiguration}).
   */
  public static final List<String> TENANT_TABLES =
      List.of("payment", "shop_order", "shop_order_item", "ledger_entry", "receipt", "shipment");

  /** Each table's rows of the tenant, in an order no foreign key objects to. */
  private static final Map<String, String> DELETES = new LinkedHashMap<>();

  static {
    // Idemkit's rows that name no tenant (mails), or may not (aggregates' rows made before they
    // did), go first, found through the service's rows.
    DELETES.put(
        "idemkit_delivery",
        "delete from idemkit_delivery where delivery_key in"
            + " (select delivery_key from receipt where tenant_id = :tenant)");
    DELETES.put(
        "idemkit_outbox_aggregate",
        "delete from idemkit_outbox_aggregate where tenant = :tenant or aggregate_id in"
            + " (select id::text from payment where tenant_id = :tenant"
            + " union all select id::text from shop_order where tenant_id = :tenant)");
    DELETES.put("idemkit_outbox", "delete from idemkit_outbox where tenant = :tenant");
    DELETES.put("idemkit_inbox", "delete from idemkit_inbox where tenant = :tenant");
    DELETES.put(
        "idemkit_inbox_sequence", "delete from idemkit_inbox_sequence where tenant = :tenant");
    for (int i = TENANT_TABLES.size() - 1; i >= 0; i--) {
      DELETES.put(
          TENANT_TABLES.get(i),
          "delete from %s where tenant_id = :tenant".formatted(TENANT_TABLES.get(i)));
    }
  }

  private final JdbcClient jdbc;
  private final TransactionTemplate transaction;

  public TenantErasure(JdbcClient jdbc, PlatformTransactionManager transactions) {
    this.jdbc = jdbc;
    this.transaction = new TransactionTemplate(transactions);
  }

  /** Deletes the tenant's rows; answers how many each table lost. Running it again finds none. */
  public Map<String, Integer> erase(String tenant) {
    return transaction.execute(
        status -> {
          Map<String, Integer> erased = new LinkedHashMap<>();
          DELETES.forEach(
              (table, sql) -> erased.put(table, jdbc.sql(sql).param("tenant", tenant).update()));
          return erased;
        });
  }
}
