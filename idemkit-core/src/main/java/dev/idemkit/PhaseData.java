package dev.idemkit;

import dev.idemkit.internal.RecordPhaseData;
import java.util.HashMap;
import java.util.Map;

/**
 * How a {@link PhasedOperation}'s data is kept with its recovery point: written as small string
 * values when a phase commits, read back by whoever resumes the operation after a crash.
 *
 * <p>{@link #of(Class)} keeps a record of the user's own: each component is one value, {@code null}
 * components are left out, and a fresh operation starts from the record with every component absent
 * ({@code null}, or zero/false for primitives).
 *
 * @param <D> the data type
 */
public interface PhaseData<D> {

  /** The values to store. Keys starting with {@code idemkit.} are reserved. */
  Map<String, String> write(D data);

  /** The data from stored values; an empty map gives the data of a fresh operation. */
  D read(Map<String, String> values);

  /** Plain string values, as a mutable map per run. */
  static PhaseData<Map<String, String>> strings() {
    return new PhaseData<>() {
      @Override
      public Map<String, String> write(Map<String, String> data) {
        return Map.copyOf(data);
      }

      @Override
      public Map<String, String> read(Map<String, String> values) {
        return new HashMap<>(values);
      }
    };
  }

  /**
   * A record type of the user's. Components may be {@code String}, {@code UUID}, {@code long},
   * {@code int}, {@code boolean} (or their boxes), {@code BigDecimal}, {@code Instant}, {@code
   * Duration} or an enum.
   *
   * @throws IllegalArgumentException if a component has another type
   */
  static <R extends Record> PhaseData<R> of(Class<R> type) {
    return RecordPhaseData.of(type);
  }
}
