package dev.idemkit.examples.payments.demo;

import dev.idemkit.CallResult;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.ForwardingIdempotencyStore;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.StoreTransaction;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Fault injection for the crash tests, present only when {@code payments.faults.kill-at} names a
 * point ({@link DemoConfiguration}): the process then kills itself with {@code kill -9} (no
 * shutdown hook, no rollback courtesy, like a power cut) when a payment reaches that point. The
 * points are the commit boundaries of a phased operation, seen from outside the payment's code (the
 * engine's listener and a wrapper of the idempotency store), so the domain code carries no hook:
 *
 * <ul>
 *   <li>{@code after-local-payment}: the local payment and the "request sent" marker are written,
 *       not committed;
 *   <li>{@code after-request-sent}: they are committed, the provider call is about to start;
 *   <li>{@code after-provider-charged}: the provider charged, its answer not yet recorded;
 *   <li>{@code after-provider-confirmed}: the answer and the completion are written, not committed.
 * </ul>
 */
public class CrashPoints implements IdempotencyListener, BeanPostProcessor {

  /** The points inside a transaction, reached through the store. */
  private static final Set<String> IN_TRANSACTION =
      Set.of("after-local-payment", "after-provider-confirmed");

  private static final Logger log = LoggerFactory.getLogger(CrashPoints.class);

  private final String killAt;

  /** Kills this process at {@code killAt}, one of the points above; blank: never. */
  public CrashPoints(String killAt) {
    this.killAt = killAt;
    if (!killAt.isBlank()) {
      log.warn("Fault injection on: this process kills itself at {}", killAt);
    }
  }

  @Override
  public void onCallStarting(ScopedKey id, String phase) {
    reached("after-request-sent");
  }

  @Override
  public void onCallReturned(ScopedKey id, String phase, CallResult<?> result) {
    if (result instanceof CallResult.Applied<?>) {
      reached("after-provider-charged");
    }
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (!(bean instanceof IdempotencyStore store) || !IN_TRANSACTION.contains(killAt)) {
      return bean;
    }
    return new ForwardingIdempotencyStore(store) {
      @Override
      public void advance(StoreTransaction tx, Ownership owner, Checkpoint checkpoint) {
        super.advance(tx, owner, checkpoint);
        if (checkpoint.pendingExternal() != null) {
          reached("after-local-payment");
        }
      }

      @Override
      public Ownership insertInProgress(
          StoreTransaction tx, NewRecord record, Duration lease, Checkpoint checkpoint) {
        Ownership owner = super.insertInProgress(tx, record, lease, checkpoint);
        reached("after-local-payment");
        return owner;
      }

      @Override
      public void finish(StoreTransaction tx, Ownership owner, FinalAnswer answer) {
        super.finish(tx, owner, answer);
        if (owner.id().operation().equals("create_payment")) {
          reached("after-provider-confirmed");
        }
      }
    };
  }

  private void reached(String point) {
    if (!point.equals(killAt)) {
      return;
    }
    long pid = ProcessHandle.current().pid();
    log.warn("Reached {}: kill -9 {}", point, pid);
    try {
      new ProcessBuilder("kill", "-9", String.valueOf(pid)).start().waitFor();
    } catch (IOException e) {
      Runtime.getRuntime().halt(137);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Runtime.getRuntime().halt(137);
  }
}
