package dev.idemkit;

/**
 * What a record keeps of a successful answer, per operation (see {@link DataProtection}).
 * Rejections ({@code FAILED_REPLAYABLE}) are always kept as {@link #BODY}.
 */
public enum ReplayMode {
  /** The answer's bytes; replays are byte for byte the stored answer. The default. */
  BODY,
  /**
   * Only the created resource's type and id (and status, headers); a replay rebuilds the answer
   * from the resource as it is now ({@link dev.idemkit.spi.ReferenceResolver}). Nothing of the body
   * is stored; a replay can differ from the first answer when the resource changed since.
   */
  REFERENCE,
  /**
   * Only status, headers and the resource id; a replay answers {@code {"id":"<resource id>"}}. For
   * clients that only need to know it worked and what was created.
   */
  OUTCOME
}
