package dev.idemkit.spi;

/**
 * What one cleanup run did.
 *
 * @param bodiesDropped expired records whose stored response body was dropped
 * @param recordsDeleted records deleted after the metadata retention
 * @param batches how many small transactions it took
 */
public record CleanupResult(long bodiesDropped, long recordsDeleted, int batches) {}
