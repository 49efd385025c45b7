package dev.idemkit.examples.payments.shards;

import dev.idemkit.examples.payments.erasure.TenantErasure;
import dev.idemkit.spring.boot.TenantDirectory;
import dev.idemkit.spring.boot.TenantMove;
import dev.idemkit.spring.boot.TenantShards;
import java.sql.SQLException;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

/**
 * Moves a tenant to another shard with every row the service keeps of it: Idemkit's (records,
 * events, inbox rows) and the service's own tables ({@link TenantErasure#TENANT_TABLES}).
 *
 * <p>Receipt mails ({@code idemkit_delivery}) carry no tenant and are not moved: a mail recorded on
 * the old shard stays there and that shard's sender delivers it, once. The receipt that recorded it
 * moves with the tenant together with the receipts consumer's inbox row, so the event that made it
 * is not applied again on the new shard and no second mail is recorded (docs/scaling.md).
 */
@Component
public class TenantMoves {

  /** What a move did: the tenant's shard before and after. */
  public record Moved(String tenant, String from, String shard) {}

  /** The shards, their directory and the move over the service's tables; empty on one database. */
  private record Sharded(TenantShards shards, TenantDirectory directory, TenantMove move) {}

  private final Optional<Sharded> sharded;

  public TenantMoves(
      ObjectProvider<TenantShards> shards, ObjectProvider<TenantDirectory> directory) {
    this.sharded =
        Optional.ofNullable(shards.getIfAvailable())
            .map(
                all -> {
                  TenantDirectory dir = directory.getObject();
                  return new Sharded(
                      all,
                      dir,
                      new TenantMove(
                          all,
                          dir,
                          TenantErasure.TENANT_TABLES.stream()
                              .map(table -> new TenantMove.Table(table, "tenant_id"))
                              .toList()));
                });
  }

  /** Whether the service runs on shards ({@code idemkit.shards.*}): else nothing moves. */
  public boolean sharded() {
    return sharded.isPresent();
  }

  /** Whether {@code shard} is one of the shards. */
  public boolean isShard(String shard) {
    return sharded.map(s -> s.shards().names().contains(shard)).orElse(false);
  }

  /**
   * Moves {@code tenant} to {@code target}, or finishes its interrupted move there, or confirms
   * that it is there: running it again is safe.
   *
   * @throws IllegalStateException if the tenant is moving to another shard, or without shards
   */
  public Moved move(String tenant, String target) throws SQLException {
    Sharded on =
        sharded.orElseThrow(() -> new IllegalStateException("The service runs on one database"));
    String from = on.directory().placement(tenant).shard();
    on.move().move(tenant, target);
    return new Moved(tenant, from, on.directory().placement(tenant).shard());
  }
}
