package dev.idemkit.chaos;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/** The checks' reads: a statement's rows one at a time, its counts by key, or its one count. */
final class Rows {

  /** What to do with one row. */
  @FunctionalInterface
  interface Reader {
    void read(ResultSet row) throws SQLException;
  }

  private Rows() {}

  /**
   * Runs {@code sql} with its parameters ({@code ?} in order: strings, or a {@link java.sql.Array})
   * and hands each row to {@code reader}.
   */
  static void each(Connection c, String sql, Reader reader, Object... parameters)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        ps.setObject(i + 1, parameters[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          reader.read(rs);
        }
      }
    }
  }

  /** A {@code select key, count(...) ... group by key}'s answer: each key with its count. */
  static Map<String, Integer> countsByKey(Connection c, String sql, Object... parameters)
      throws SQLException {
    Map<String, Integer> counts = new HashMap<>();
    each(c, sql, rs -> counts.put(rs.getString(1), rs.getInt(2)), parameters);
    return counts;
  }

  /** The one number a {@code select count(*)} answers. */
  static long count(Connection c, String sql) throws SQLException {
    long[] n = new long[1];
    each(c, sql, rs -> n[0] = rs.getLong(1));
    return n[0];
  }
}
