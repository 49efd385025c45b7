package dev.idemkit.jdbc;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A whole SQL statement whose parameters are named ({@code :tenant}), bound by name. The text is
 * turned once, when the constant is made (at class load), into the JDBC text with a {@code ?} for
 * each {@code :name} and the positions of each name; a name used twice is bound once and sent in
 * both places. Nothing is patched at run time: what runs is the written statement with its names
 * replaced by {@code ?}.
 *
 * <p>What is not a parameter: a cast ({@code ::text}), a colon not followed by a letter, and
 * anything in a string literal, a quoted identifier or a {@code --} comment. A {@code ?} in the
 * text is refused, so a statement is bound by name only. Hand-written rather than a library's: the
 * store depends on nothing but the JDK and the driver, and this is the whole of what it needs.
 */
final class NamedSql {

  private final String sql;
  private final Map<String, int[]> positions;

  private NamedSql(String sql, Map<String, int[]> positions) {
    this.sql = sql;
    this.positions = positions;
  }

  /** The statement {@code text}, with its {@code :name} parameters. */
  static NamedSql of(String text) {
    StringBuilder sql = new StringBuilder(text.length());
    Map<String, List<Integer>> found = new HashMap<>();
    int parameters = 0;
    int i = 0;
    while (i < text.length()) {
      char c = text.charAt(i);
      int end;
      if (c == '\'' || c == '"') {
        end = text.indexOf(c, i + 1);
        if (end < 0) {
          throw new IllegalArgumentException("Unclosed " + c + " in " + text);
        }
        end++;
      } else if (c == '-' && text.startsWith("--", i)) {
        end = text.indexOf('\n', i);
        end = end < 0 ? text.length() : end;
      } else if (c == ':' && text.startsWith("::", i)) {
        end = i + 2;
      } else if (c == ':' && i + 1 < text.length() && isNameStart(text.charAt(i + 1))) {
        end = i + 2;
        while (end < text.length() && isNamePart(text.charAt(end))) {
          end++;
        }
        found.computeIfAbsent(text.substring(i + 1, end), n -> new ArrayList<>()).add(++parameters);
        sql.append('?');
        i = end;
        continue;
      } else if (c == '?') {
        throw new IllegalArgumentException("A positional parameter in " + text);
      } else {
        end = i + 1;
      }
      sql.append(text, i, end);
      i = end;
    }
    Map<String, int[]> positions = new HashMap<>();
    found.forEach(
        (name, at) -> positions.put(name, at.stream().mapToInt(Integer::intValue).toArray()));
    return new NamedSql(sql.toString(), Map.copyOf(positions));
  }

  /**
   * This statement followed by the commit of its transaction, sent in one round trip; its
   * parameters are where they were.
   */
  NamedSql andCommit() {
    return new NamedSql(sql + ";\ncommit", positions);
  }

  /** The JDBC text, a {@code ?} for each parameter. */
  String sql() {
    return sql;
  }

  /** Binds the parameters of {@code ps}, a statement prepared from {@link #sql()}, by name. */
  Parameters bind(PreparedStatement ps) {
    return new Parameters(ps);
  }

  @Override
  public String toString() {
    return sql;
  }

  private static boolean isNameStart(char c) {
    return Character.isLetter(c) || c == '_';
  }

  private static boolean isNamePart(char c) {
    return Character.isLetterOrDigit(c) || c == '_';
  }

  /** The parameters of one prepared statement; each setter binds every place its name is used. */
  final class Parameters {
    private final PreparedStatement ps;

    private Parameters(PreparedStatement ps) {
      this.ps = ps;
    }

    /** A text value; {@code null} is bound as a typed (varchar) NULL. */
    Parameters set(String name, String value) throws SQLException {
      return each(
          name,
          p -> {
            if (value == null) {
              ps.setNull(p, Types.VARCHAR);
            } else {
              ps.setString(p, value);
            }
          });
    }

    Parameters set(String name, long value) throws SQLException {
      return each(name, p -> ps.setLong(p, value));
    }

    Parameters set(String name, int value) throws SQLException {
      return each(name, p -> ps.setInt(p, value));
    }

    Parameters set(String name, boolean value) throws SQLException {
      return each(name, p -> ps.setBoolean(p, value));
    }

    Parameters set(String name, byte[] value) throws SQLException {
      return each(name, p -> ps.setBytes(p, value));
    }

    Parameters set(String name, Array value) throws SQLException {
      return each(name, p -> ps.setArray(p, value));
    }

    /** Binds every position of {@code name}; a name the statement does not have is refused. */
    private Parameters each(String name, Setter setter) throws SQLException {
      int[] at = positions.get(name);
      if (at == null) {
        throw new IllegalArgumentException("No parameter :" + name + " in " + sql);
      }
      for (int p : at) {
        setter.set(p);
      }
      return this;
    }
  }

  @FunctionalInterface
  private interface Setter {
    void set(int position) throws SQLException;
  }
}
