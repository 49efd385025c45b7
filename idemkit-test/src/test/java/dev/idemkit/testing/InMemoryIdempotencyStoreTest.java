package dev.idemkit.testing;

import dev.idemkit.spi.IdempotencyStore;
import java.time.Clock;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

class InMemoryIdempotencyStoreTest extends IdempotencyStoreContract {

  @Override
  protected IdempotencyStore createStore(Clock clock) {
    return new InMemoryIdempotencyStore(clock);
  }

  @Override
  protected Ledger createLedger() {
    ConcurrentHashMap<String, AtomicLong> entries = new ConcurrentHashMap<>();
    return new Ledger() {
      @Override
      public void write(dev.idemkit.spi.StoreTransaction tx, String entry) {
        AtomicLong count = entries.computeIfAbsent(entry, e -> new AtomicLong());
        count.incrementAndGet();
        tx.unwrap(InMemoryIdempotencyStore.Transaction.class).onRollback(count::decrementAndGet);
      }

      @Override
      public long count(String entry) {
        AtomicLong count = entries.get(entry);
        return count == null ? 0 : count.get();
      }
    };
  }
}
