package dev.idemkit.spi;

import java.time.Duration;

/**
 * One cleanup run ({@link RecordCleanup#beginRun}): its batches, in order, from one thread. The run
 * keeps where its walks stopped, so a batch goes on after the previous one rather than reading
 * again what that one passed (the PostgreSQL store's live records past their window, which are
 * never cleaned up, are read once per run rather than once per batch). What becomes droppable
 * behind that position meanwhile is found by the next run.
 */
public interface CleanupRun {

  /**
   * One batch of each cleanup walk, each its own short transaction that skips rows another holds:
   * drops the stored response of up to {@code batchSize} records expired at least {@code
   * bodyRetention} ago (their metadata stays), then deletes up to {@code batchSize} records whose
   * body is dropped and which expired at least {@code metadataRetention} ago, with their history,
   * and the history of earlier operations of keys reused after their window once the reuse is
   * {@code metadataRetention} old (the record lives on, so its history would not go with it). Never
   * touches a live record ({@code IN_PROGRESS}, {@code UNKNOWN_REQUIRES_RECOVERY}); any number of
   * runs, on any number of instances, may go at once, and no row is dropped twice.
   *
   * @throws IllegalArgumentException if {@code batchSize} is not positive or a retention negative
   */
  CleanupResult batch(Duration bodyRetention, Duration metadataRetention, int batchSize);
}
