package dev.idemkit.examples.payments.demo;

import dev.idemkit.IdempotencyRecord;
import dev.idemkit.LostOwnershipException;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.ForwardingIdempotencyStore;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.NewRecord;
import dev.idemkit.spi.Ownership;
import dev.idemkit.spi.RecordExistsException;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * <strong>Deliberately broken</strong> idempotency stores, for the chaos run only: they prove that
 * its accounting checker catches the two classic bugs. Nothing selects them unless {@code
 * payments.demo.broken-store} is set (see {@link DemoConfiguration}); never use them anywhere else.
 */
public final class BrokenStores {

  private BrokenStores() {}

  /**
   * Find-then-insert: looks the key up and, finding nothing, inserts it a moment later, like a
   * store without a uniqueness guarantee. The insert overwrites whatever a concurrent request
   * inserted in between (emulated by deleting that record first: the real store's {@code ON
   * CONFLICT DO NOTHING} would otherwise still save the day), so two concurrent identical requests
   * both become owner and both run.
   */
  public static IdempotencyStore findThenInsert(IdempotencyStore real, Duration window) {
    return new Forwarding(real) {
      @Override
      public ClaimAttempt claim(StoreTransaction tx, NewRecord record, Duration lease) {
        Optional<Snapshot> found = real.read(tx, record.id());
        if (found.isPresent()) {
          return new ClaimAttempt.Found(found.get());
        }
        overwriteAfter(window, tx, record.id());
        return real.claim(tx, record, lease);
      }

      /** The record written at the call's marker, inserted the same broken way. */
      @Override
      public Ownership insertInProgress(
          StoreTransaction tx, NewRecord record, Duration lease, Checkpoint checkpoint) {
        if (real.read(tx, record.id()).isPresent()) {
          throw new RecordExistsException(record.id());
        }
        overwriteAfter(window, tx, record.id());
        return real.insertInProgress(tx, record, lease, checkpoint);
      }
    };
  }

  /**
   * Waits {@code window} (the gap between a look-up and its insert), then deletes the key's record,
   * as a store without a uniqueness guarantee would overwrite what a concurrent request inserted in
   * between (the real store's primary key would otherwise still save the day).
   */
  private static void overwriteAfter(Duration window, StoreTransaction tx, ScopedKey id) {
    try {
      Thread.sleep(window.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (PreparedStatement ps =
        tx.unwrap(Connection.class)
            .prepareStatement(
                "delete from idemkit_record where tenant = ? and operation = ? and idem_key = ?")) {
      ps.setString(1, id.scope().tenant());
      ps.setString(2, id.scope().operation());
      ps.setString(3, id.key().value());
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("broken store: could not overwrite " + id, e);
    }
  }

  /**
   * No fencing: an owner write that lost to a newer owner (its token is stale) is written anyway,
   * with the current token, so an owner that was paused past its lease overwrites the work of the
   * one that took over.
   */
  public static IdempotencyStore noFencing(IdempotencyStore real) {
    return new Forwarding(real) {
      @Override
      public void advance(StoreTransaction tx, Ownership owner, Checkpoint checkpoint) {
        unfenced(tx, owner, o -> real.advance(tx, o, checkpoint));
      }

      @Override
      public void finish(StoreTransaction tx, Ownership owner, FinalAnswer answer) {
        unfenced(tx, owner, o -> real.finish(tx, o, answer));
      }

      @Override
      public void suspend(StoreTransaction tx, Ownership owner, RecordState state) {
        unfenced(tx, owner, o -> real.suspend(tx, o, state));
      }

      @Override
      public Ownership renew(StoreTransaction tx, Ownership owner, Duration lease) {
        try {
          return real.renew(tx, owner, lease);
        } catch (LostOwnershipException stale) {
          return real.renew(tx, current(tx, owner, stale), lease);
        }
      }

      /** Runs {@code write} as {@code owner}; when its token is stale, again with the current. */
      private void unfenced(StoreTransaction tx, Ownership owner, Consumer<Ownership> write) {
        try {
          write.accept(owner);
        } catch (LostOwnershipException stale) {
          write.accept(current(tx, owner, stale));
        }
      }

      private Ownership current(StoreTransaction tx, Ownership owner, LostOwnershipException e) {
        IdempotencyRecord now =
            real.read(tx, owner.id()).map(Snapshot::record).orElseThrow(() -> e);
        return new Ownership(owner.id(), now.fencingToken(), owner.lockedUntil());
      }
    };
  }

  /** Passes every call on to the real store; the variants above override what they break. */
  private static class Forwarding extends ForwardingIdempotencyStore {
    final IdempotencyStore real;

    Forwarding(IdempotencyStore real) {
      super(real);
      this.real = real;
    }
  }
}
