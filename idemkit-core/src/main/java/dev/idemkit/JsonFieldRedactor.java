package dev.idemkit;

import dev.idemkit.internal.Json;
import dev.idemkit.spi.ResponseRedactor;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Redacts fields of a JSON answer by path before it is stored: {@code card.cvc} drops the field,
 * {@code card.number} with masking keeps only its last four characters ({@code "************4242"};
 * a JSON number is masked the same way and stored as a string). A path walks objects by field name
 * and applies to every element of an array on the way. Answers of a type other than JSON (by their
 * {@code Content-Type}, whatever the case of its name), and answers that are not valid JSON, are
 * stored unchanged; an answer without a {@code Content-Type} is redacted if it is JSON.
 *
 * <p>The stored JSON keeps the answer's field order and values but not its whitespace; replays are
 * byte for byte what was stored, not what the first caller got.
 */
public final class JsonFieldRedactor implements ResponseRedactor {

  private final List<String[]> drop;
  private final List<String[]> mask;

  private JsonFieldRedactor(List<String> drop, List<String> mask) {
    this.drop = drop.stream().map(p -> p.split("\\.")).toList();
    this.mask = mask.stream().map(p -> p.split("\\.")).toList();
  }

  /**
   * Drops the fields at {@code dropPaths}; masks the string and number fields at {@code maskPaths}.
   */
  public static JsonFieldRedactor of(List<String> dropPaths, List<String> maskPaths) {
    return new JsonFieldRedactor(List.copyOf(dropPaths), List.copyOf(maskPaths));
  }

  @Override
  public StoredResponse redact(ScopedKey id, StoredResponse response) {
    String type = contentType(response.headers());
    if ((type != null && !type.toLowerCase(java.util.Locale.ROOT).contains("json"))
        || response.body().length == 0) {
      return response;
    }
    Object tree;
    try {
      tree = Json.parse(new String(response.body(), StandardCharsets.UTF_8));
    } catch (IllegalArgumentException notJson) {
      return response;
    }
    for (String[] path : drop) {
      apply(tree, path, 0, true);
    }
    for (String[] path : mask) {
      apply(tree, path, 0, false);
    }
    StringBuilder out = new StringBuilder();
    write(tree, out);
    return new StoredResponse(
        response.status(),
        response.headers(),
        out.toString().getBytes(StandardCharsets.UTF_8),
        response.schemaVersion(),
        response.resourceId());
  }

  /**
   * The Content-Type header, whatever the case of its name (HTTP/2 writes it in lower case), or
   * {@code null} without one: a body with no type is read as JSON if it is JSON.
   */
  private static String contentType(Map<String, String> headers) {
    for (Map.Entry<String, String> h : headers.entrySet()) {
      if ("Content-Type".equalsIgnoreCase(h.getKey())) {
        return h.getValue() == null ? "" : h.getValue();
      }
    }
    return null;
  }

  @SuppressWarnings("unchecked")
  private static void apply(Object node, String[] path, int at, boolean drop) {
    if (node instanceof List<?> list) {
      for (Object element : list) {
        apply(element, path, at, drop);
      }
      return;
    }
    if (!(node instanceof Map<?, ?> raw)) {
      return;
    }
    Map<String, Object> map = (Map<String, Object>) raw;
    if (at == path.length - 1) {
      if (!map.containsKey(path[at])) {
        return;
      }
      if (drop) {
        map.remove(path[at]);
      } else if (map.get(path[at]) instanceof String s) {
        map.put(path[at], mask(s));
      } else if (map.get(path[at]) instanceof BigDecimal n) {
        // A card number written as a JSON number is masked too, as a string: its digits would
        // otherwise be stored in full.
        map.put(path[at], mask(n.toPlainString()));
      }
      return;
    }
    apply(map.get(path[at]), path, at + 1, drop);
  }

  private static String mask(String s) {
    int keep = s.length() > 8 ? 4 : 0;
    return "*".repeat(s.length() - keep) + s.substring(s.length() - keep);
  }

  private static void write(Object v, StringBuilder out) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof String s) {
      quote(s, out);
    } else if (v instanceof BigDecimal || v instanceof Boolean) {
      out.append(v);
    } else if (v instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : new LinkedHashMap<>(map).entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        quote((String) e.getKey(), out);
        out.append(':');
        write(e.getValue(), out);
      }
      out.append('}');
    } else if (v instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        write(list.get(i), out);
      }
      out.append(']');
    } else {
      throw new IllegalArgumentException("not a JSON value: " + v.getClass());
    }
  }

  private static void quote(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
