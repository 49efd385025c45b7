package dev.idemkit.examples.payments.demo;

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
    delete(tx, id);
  }

  /** Deletes the key's record in the transaction, as an overwrite by a broken store begins. */
  private static void delete(StoreTransaction tx, ScopedKey id) {
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
   * Late owner overwrites: a finished record is taken over as if its owner had gone, like a store
   * whose takeover asks only whether the lease ran out and forgets the state (a finished record's
   * lease ended when it finished). A request that arrives for a finished key (a client asking
   * again, a retry whose first answer was lost) then becomes the record's late owner, runs the
   * operation again and writes its answer over the stored one (emulated by deleting the finished
   * record in the same transaction, before the real store's claim or insert). A payment's second
   * run charges nothing again: it meets the payment's business key and answers {@code
   * PAYMENT_ALREADY_EXISTS} where the client was told {@code 201}, so what breaks is the answer the
   * key gives, which the chaos run's answer check compares. (An order has no business key of its
   * own: its second run places a second order.)
   */
  public static IdempotencyStore lateOwnerOverwrites(IdempotencyStore real) {
    return new Forwarding(real) {
      @Override
      public ClaimAttempt claim(StoreTransaction tx, NewRecord record, Duration lease) {
        takeOverIfFinished(tx, record.id());
        return real.claim(tx, record, lease);
      }

      @Override
      public void insertFinished(StoreTransaction tx, NewRecord record, FinalAnswer answer) {
        takeOverIfFinished(tx, record.id());
        real.insertFinished(tx, record, answer);
      }

      @Override
      public Ownership insertInProgress(
          StoreTransaction tx, NewRecord record, Duration lease, Checkpoint checkpoint) {
        takeOverIfFinished(tx, record.id());
        return real.insertInProgress(tx, record, lease, checkpoint);
      }

      /** A finished record does not answer from a read either: the request claims, and runs. */
      @Override
      public Optional<Snapshot> peek(ScopedKey id) {
        return real.peek(id).filter(s -> !s.record().state().isReplayable());
      }

      private void takeOverIfFinished(StoreTransaction tx, ScopedKey id) {
        if (real.read(tx, id).filter(s -> s.record().state().isReplayable()).isPresent()) {
          delete(tx, id);
        }
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
