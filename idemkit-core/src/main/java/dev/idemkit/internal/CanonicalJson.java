package dev.idemkit.internal;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Serializes a plain value tree as canonical JSON following RFC 8785, the JSON Canonicalization
 * Scheme (JCS).
 *
 * <p>Two trees that mean the same JSON value always produce the same text, whatever the key order
 * of their maps or the scale of their decimals, so the output can be hashed or compared byte for
 * byte.
 *
 * <p>Accepted values:
 *
 * <ul>
 *   <li>{@code null}, {@link Boolean}, {@link CharSequence};
 *   <li>{@link Map} with {@link String} keys, serialized as an object with its keys sorted by
 *       UTF-16 code units;
 *   <li>{@link List}, serialized as an array in list order;
 *   <li>{@link Double}, {@link Float}, {@link Integer}, {@link Long}, {@link Short}, {@link Byte},
 *       {@link BigInteger} and {@link BigDecimal}, serialized as ECMAScript's {@code
 *       Number.prototype.toString} prints the IEEE 754 double of the value (RFC 8785 §3.2.2.3).
 * </ul>
 *
 * <p>JSON numbers are IEEE 754 doubles in RFC 8785. A {@link Float} is widened exactly to a double,
 * so {@code 0.1f} is written as {@code 0.10000000149011612}. A {@link Long}, {@link BigInteger} or
 * {@link BigDecimal} whose value the canonical double text does not reproduce exactly is rejected
 * rather than rounded: otherwise two different amounts could canonicalize, and hash, alike. Pass
 * such values as strings.
 *
 * <p>Everything else is rejected with an {@link IllegalArgumentException}: other types, non-string
 * keys, NaN and infinities, strings with unpaired surrogates (not representable in UTF-8, and
 * excluded by I-JSON), cyclic structures and nesting deeper than {@value #MAX_DEPTH} levels.
 *
 * <p>Internal to Idemkit, not API: it may change in any release.
 */
public final class CanonicalJson {

  /** Deepest nesting of maps and lists that is accepted. */
  public static final int MAX_DEPTH = 1000;

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private CanonicalJson() {}

  /**
   * Returns the RFC 8785 canonical JSON text of {@code value}.
   *
   * @param value a tree of the supported types; may be {@code null}
   * @return the canonical JSON text
   * @throws IllegalArgumentException if the tree holds a value that has no canonical form
   */
  public static String canonicalize(Object value) {
    StringBuilder out = new StringBuilder();
    new Writer(out).write(value, 0);
    return out.toString();
  }

  /**
   * Returns the UTF-8 bytes of {@link #canonicalize(Object)}, the form RFC 8785 hashes and signs.
   *
   * @param value a tree of the supported types; may be {@code null}
   * @return the canonical JSON text encoded as UTF-8
   * @throws IllegalArgumentException if the tree holds a value that has no canonical form
   */
  public static byte[] canonicalBytes(Object value) {
    return canonicalize(value).getBytes(StandardCharsets.UTF_8);
  }

  private static final class Writer {
    private final StringBuilder out;
    private final Set<Object> open = Collections.newSetFromMap(new IdentityHashMap<>());

    Writer(StringBuilder out) {
      this.out = out;
    }

    void write(Object value, int depth) {
      if (value == null) {
        out.append("null");
      } else if (value instanceof Boolean b) {
        out.append(b ? "true" : "false");
      } else if (value instanceof CharSequence s) {
        writeString(s.toString());
      } else if (value instanceof Number n) {
        out.append(number(n));
      } else if (value instanceof Map<?, ?> map) {
        enter(map, depth);
        writeObject(map, depth);
        open.remove(map);
      } else if (value instanceof List<?> list) {
        enter(list, depth);
        writeArray(list, depth);
        open.remove(list);
      } else {
        throw unsupported(value);
      }
    }

    private void enter(Object container, int depth) {
      if (depth >= MAX_DEPTH) {
        throw new IllegalArgumentException(
            "value is nested deeper than " + MAX_DEPTH + " levels; cannot canonicalize");
      }
      if (!open.add(container)) {
        throw new IllegalArgumentException(
            "value contains a cycle: a map or list contains itself; cannot canonicalize");
      }
    }

    private void writeObject(Map<?, ?> map, int depth) {
      List<Map.Entry<String, Object>> entries = new ArrayList<>(map.size());
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        Object key = entry.getKey();
        if (!(key instanceof String)) {
          throw new IllegalArgumentException(
              "JSON object keys must be strings, got "
                  + (key == null ? "a null key" : "a key of type " + key.getClass().getTypeName()));
        }
        entries.add(new AbstractMap.SimpleImmutableEntry<>((String) key, entry.getValue()));
      }
      entries.sort(Map.Entry.comparingByKey());
      out.append('{');
      String previous = null;
      for (Map.Entry<String, Object> entry : entries) {
        String key = entry.getKey();
        if (key.equals(previous)) {
          throw new IllegalArgumentException("JSON object has the key \"" + key + "\" twice");
        }
        if (previous != null) {
          out.append(',');
        }
        writeString(key);
        out.append(':');
        write(entry.getValue(), depth + 1);
        previous = key;
      }
      out.append('}');
    }

    private void writeArray(List<?> list, int depth) {
      out.append('[');
      boolean first = true;
      for (Object element : list) {
        if (!first) {
          out.append(',');
        }
        write(element, depth + 1);
        first = false;
      }
      out.append(']');
    }

    private void writeString(String s) {
      out.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"' -> out.append("\\\"");
          case '\\' -> out.append("\\\\");
          case '\b' -> out.append("\\b");
          case '\f' -> out.append("\\f");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            if (c < 0x20) {
              out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
            } else if (Character.isHighSurrogate(c)
                && i + 1 < s.length()
                && Character.isLowSurrogate(s.charAt(i + 1))) {
              out.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
              throw new IllegalArgumentException(
                  "string has an unpaired surrogate U+"
                      + String.format(Locale.ROOT, "%04X", (int) c)
                      + " at index "
                      + i
                      + "; it cannot be encoded as UTF-8");
            } else {
              out.append(c);
            }
          }
        }
      }
      out.append('"');
    }
  }

  private static IllegalArgumentException unsupported(Object value) {
    return new IllegalArgumentException(
        "cannot canonicalize a value of type "
            + value.getClass().getTypeName()
            + "; supported: null, Boolean, CharSequence, Map<String, ?>, List, Double, Float,"
            + " Integer, Long, Short, Byte, BigInteger, BigDecimal");
  }

  private static String number(Number n) {
    if (n instanceof Double || n instanceof Float) {
      return formatDouble(n.doubleValue());
    }
    if (n instanceof Integer || n instanceof Short || n instanceof Byte) {
      return Integer.toString(n.intValue());
    }
    if (n instanceof Long l) {
      return formatExact(BigDecimal.valueOf(l), "Long");
    }
    if (n instanceof BigInteger i) {
      return formatExact(new BigDecimal(i), "BigInteger");
    }
    if (n instanceof BigDecimal d) {
      return formatExact(d, "BigDecimal");
    }
    throw unsupported(n);
  }

  private static String formatExact(BigDecimal value, String type) {
    double d = value.doubleValue();
    BigDecimal shortest = Double.isInfinite(d) ? null : shortestDecimal(d);
    if (shortest == null || shortest.compareTo(value) != 0) {
      throw new IllegalArgumentException(
          type
              + " "
              + value
              + " is not exactly representable as an IEEE 754 double, which is what RFC 8785"
              + " JSON numbers are"
              + (shortest == null ? "" : " (it would become " + format(shortest) + ")")
              + "; pass the value as a string instead, because the precision loss would make"
              + " different amounts hash alike");
    }
    return format(shortest);
  }

  private static String formatDouble(double d) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new IllegalArgumentException(
          "cannot canonicalize " + d + ": NaN and Infinity are not valid JSON numbers");
    }
    return format(shortestDecimal(d));
  }

  /**
   * Returns the decimal with the fewest significant digits that parses back to {@code d}; among
   * several with that many digits, the one closest to the exact value of {@code d}, and on a tie
   * the one whose last digit is even. This is the digit choice of ECMAScript's Number::toString.
   * Both zeros give {@link BigDecimal#ZERO}.
   */
  static BigDecimal shortestDecimal(double d) {
    if (d == 0) {
      return BigDecimal.ZERO;
    }
    double magnitude = Math.abs(d);
    BigDecimal exact = new BigDecimal(magnitude);
    for (int precision = 1; precision <= 17; precision++) {
      BigDecimal down = exact.round(new MathContext(precision, RoundingMode.DOWN));
      BigDecimal up = exact.round(new MathContext(precision, RoundingMode.UP));
      boolean downOk = Double.parseDouble(down.toString()) == magnitude;
      boolean upOk = Double.parseDouble(up.toString()) == magnitude;
      BigDecimal chosen;
      if (downOk && upOk) {
        int cmp = exact.subtract(down).compareTo(up.subtract(exact));
        if (cmp == 0) {
          chosen = down.unscaledValue().testBit(0) ? up : down;
        } else {
          chosen = cmp < 0 ? down : up;
        }
      } else if (downOk) {
        chosen = down;
      } else if (upOk) {
        chosen = up;
      } else {
        continue;
      }
      return d < 0 ? chosen.negate() : chosen;
    }
    throw new AssertionError("no decimal of at most 17 digits round-trips " + d);
  }

  /** Lays out a decimal as ECMAScript's Number::toString does (ECMA-262, Number::toString). */
  private static String format(BigDecimal value) {
    if (value.signum() == 0) {
      return "0";
    }
    BigDecimal stripped = value.stripTrailingZeros();
    String digits = stripped.unscaledValue().abs().toString();
    int k = digits.length();
    int n = k - stripped.scale();
    StringBuilder out = new StringBuilder(k + 8);
    if (stripped.signum() < 0) {
      out.append('-');
    }
    if (k <= n && n <= 21) {
      out.append(digits).append("0".repeat(n - k));
    } else if (0 < n && n <= 21) {
      out.append(digits, 0, n).append('.').append(digits, n, k);
    } else if (-6 < n && n <= 0) {
      out.append("0.").append("0".repeat(-n)).append(digits);
    } else {
      out.append(digits.charAt(0));
      if (k > 1) {
        out.append('.').append(digits, 1, k);
      }
      int exponent = n - 1;
      out.append('e').append(exponent < 0 ? '-' : '+').append(Math.abs(exponent));
    }
    return out.toString();
  }
}
