package dev.idemkit.examples.payments.shards;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.spi.EventTransport;
import dev.idemkit.spring.boot.TenantShards;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import javax.sql.DataSource;

/**
 * Where the service's background work runs: with {@code idemkit.shards.*} one lane per shard, else
 * one lane, the application's {@code DataSource}. A worker that touches the database runs once per
 * lane, on the lane's own pool or bound to it, so that a tenant's events, inbox rows, ledger
 * entries, receipts and mails stay on the tenant's shard (docs/scaling.md, "Workers per shard").
 */
public final class Lanes {

  /** The one lane's name without shards. */
  static final String SINGLE = "default";

  private final DataSource dataSource;

  /** The shards, or null: one database. */
  private final TenantShards shards;

  Lanes(DataSource dataSource, TenantShards shards) {
    this.dataSource = dataSource;
    this.shards = shards;
  }

  /** The lanes' names: the shards', or one. */
  public List<String> names() {
    return shards == null ? List.of(SINGLE) : shards.names();
  }

  /** The lane's own pool: for work that binds nothing (a relay's threads, a sender's). */
  public DataSource pool(String lane) {
    return shards == null ? dataSource : shards.shard(lane);
  }

  /** Runs {@code work} with the lane bound to this thread (the application's tables, the store). */
  public <T> T on(String lane, Callable<T> work) throws Exception {
    return shards == null ? work.call() : shards.on(lane, work);
  }

  /** The sum of {@code count} over every lane, each run bound to its lane. */
  public long sum(Callable<Long> count) throws Exception {
    long total = 0;
    for (String lane : names()) {
      total += on(lane, count);
    }
    return total;
  }

  /**
   * {@code transport} with the lane bound while it sends: the embedded transport hands each event
   * to the inbox consumers in the sending thread, so their transactions run on the lane's shard,
   * where the event's tenant lives.
   */
  public EventTransport bound(String lane, EventTransport transport) {
    if (shards == null) {
      return transport;
    }
    return new EventTransport() {
      @Override
      public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
        try {
          return shards.on(lane, () -> transport.send(events));
        } catch (RuntimeException e) {
          throw e;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }

      @Override
      public Duration redeliveryHorizon() {
        return transport.redeliveryHorizon();
      }

      @Override
      public void close() {
        // Every lane sends on the one transport: its owner closes it, not each lane.
      }
    };
  }
}
