package dev.idemkit.spi;

import java.time.Duration;

/**
 * A store capability ({@link IdempotencyStore#capability}): dropping what finished records no
 * longer need. A cleanup worker needs it.
 *
 * <p>Cleanup goes in runs ({@link #beginRun}), each run in small batches, each batch its own short
 * transaction: a scheduler that shares the database with traffic pauses between two batches. A run
 * is an object of its own, so runs of several threads or instances never share a position.
 */
public interface RecordCleanup {

  /**
   * Begins a cleanup run: its batches ({@link CleanupRun#batch}) may go on from where the run's
   * previous batch stopped. Every expired record is found by a later run at the latest.
   */
  CleanupRun beginRun();

  /**
   * Runs cleanup until nothing is left: one run, batches until a batch finds less than {@code
   * batchSize} rows of each kind. Unpaced; a scheduler that shares the database with traffic runs
   * the batches itself and pauses between them.
   */
  default CleanupResult cleanup(Duration bodyRetention, Duration metadataRetention, int batchSize) {
    CleanupRun run = beginRun();
    long dropped = 0;
    long deleted = 0;
    int batches = 0;
    CleanupResult batch;
    do {
      batch = run.batch(bodyRetention, metadataRetention, batchSize);
      dropped += batch.bodiesDropped();
      deleted += batch.recordsDeleted();
      batches += batch.batches();
    } while (batch.bodiesDropped() == batchSize || batch.recordsDeleted() == batchSize);
    return new CleanupResult(dropped, deleted, batches);
  }

  /**
   * {@link #cleanup(Duration, Duration, int)} with no body retention: bodies are dropped as soon as
   * their records expire, records deleted {@code metadataRetention} after.
   */
  default CleanupResult cleanup(Duration metadataRetention, int batchSize) {
    return cleanup(Duration.ZERO, metadataRetention, batchSize);
  }
}
