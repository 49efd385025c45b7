package dev.idemkit.spring.boot;

import dev.idemkit.spi.CleanupResult;
import dev.idemkit.spi.CleanupRun;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.RecordCleanup;
import dev.idemkit.spi.StoreCapabilities;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drops what finished records no longer need, every {@code interval}: response bodies after their
 * retention, then records and their history after the metadata retention (see {@link
 * CleanupRun#batch}). A run goes on batch after batch until a batch finds less than a full batch of
 * either kind, pausing {@code pause} between two batches so traffic keeps the database most of the
 * time.
 *
 * <p>Every instance runs it; they share the work rather than repeat it, because each batch skips
 * rows another instance's batch holds and a row done by one no longer matches the other's walk.
 */
public class IdempotencyCleanupWorker extends PollingLifecycle {

  private static final Logger log = LoggerFactory.getLogger(IdempotencyCleanupWorker.class);

  private final RecordCleanup cleanup;
  private final IdempotencyListener listener;
  private final IdemkitProperties.Cleanup settings;

  /**
   * @throws IllegalArgumentException if {@code store} lacks the {@link RecordCleanup} capability
   */
  public IdempotencyCleanupWorker(
      IdempotencyStore store, IdempotencyListener listener, IdemkitProperties.Cleanup settings) {
    super(
        "idemkit-cleanup", firstRunAfter(checked(settings).getInterval()), settings.getInterval());
    this.cleanup =
        StoreCapabilities.require(
            store,
            RecordCleanup.class,
            "the cleanup worker (turned off by idemkit.cleanup.enabled=false)");
    this.listener = listener;
    this.settings = settings;
  }

  /** {@code settings}, refused here rather than at the first run. */
  private static IdemkitProperties.Cleanup checked(IdemkitProperties.Cleanup settings) {
    if (settings.getBatchSize() < 1) {
      throw new IllegalArgumentException("idemkit.cleanup.batch-size must be positive");
    }
    // Refused here rather than at the first run: a negative retention or pause would fail every
    // run with a WARN line while the application went on without cleanup, and a zero interval
    // would run cleanup back to back.
    if (settings.getInterval().isNegative() || settings.getInterval().isZero()) {
      throw new IllegalArgumentException(
          "idemkit.cleanup.interval must be positive: " + settings.getInterval());
    }
    if (settings.getPause().isNegative()) {
      throw new IllegalArgumentException(
          "idemkit.cleanup.pause cannot be negative: " + settings.getPause());
    }
    if (settings.getBodyRetention().isNegative() || settings.getMetadataRetention().isNegative()) {
      throw new IllegalArgumentException(
          "idemkit.cleanup.body-retention and metadata-retention cannot be negative: "
              + settings.getBodyRetention()
              + ", "
              + settings.getMetadataRetention());
    }
    if (settings.getMetadataRetention().compareTo(settings.getBodyRetention()) < 0) {
      log.warn(
          "idemkit.cleanup.metadata-retention ({}) is shorter than body-retention ({}): records"
              + " are deleted once their body is dropped",
          settings.getMetadataRetention(),
          settings.getBodyRetention());
    }
    return settings;
  }

  @Override
  void runOnce() throws InterruptedException {
    cleanUpOnce();
  }

  @Override
  String failedRun() {
    return "Cleanup run failed";
  }

  /** One run, now: batches until nothing is due (or the worker stops). */
  public CleanupResult cleanUpOnce() throws InterruptedException {
    long bodies = 0;
    long records = 0;
    int batches = 0;
    CleanupRun run = cleanup.beginRun();
    while (true) {
      CleanupResult batch =
          run.batch(
              settings.getBodyRetention(),
              settings.getMetadataRetention(),
              settings.getBatchSize());
      bodies += batch.bodiesDropped();
      records += batch.recordsDeleted();
      batches += batch.batches();
      if (batch.bodiesDropped() > 0 || batch.recordsDeleted() > 0) {
        listener.onCleanup(batch.bodiesDropped(), batch.recordsDeleted());
      }
      boolean more =
          batch.bodiesDropped() >= settings.getBatchSize()
              || batch.recordsDeleted() >= settings.getBatchSize();
      if (!more || Thread.currentThread().isInterrupted()) {
        break;
      }
      Thread.sleep(settings.getPause().toMillis());
    }
    if (bodies > 0 || records > 0) {
      log.debug("Cleanup dropped {} bodies and deleted {} records", bodies, records);
    }
    return new CleanupResult(bodies, records, batches);
  }
}
