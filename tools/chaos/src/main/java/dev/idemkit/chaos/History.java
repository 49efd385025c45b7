package dev.idemkit.chaos;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every client operation and nemesis action in Jepsen's model: an {@code invoke}, then its
 * completion, {@code ok} (it happened), {@code fail} (it definitely did not) or {@code info} (the
 * client cannot tell). Written as JSON lines with Jepsen's op fields ({@code index}, {@code time}
 * in nanoseconds, {@code type}, {@code process}, {@code f}, {@code value}), the form Jepsen's
 * history tooling and Elle read, and kept in memory for the checker.
 */
final class History implements AutoCloseable {

  /** One line of the history. */
  record Op(
      long index, long time, String type, Object process, String f, Map<String, Object> value) {}

  private final BufferedWriter out;
  private final long start = System.nanoTime();
  private final List<Op> ops = new ArrayList<>();

  History(Path file) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
  }

  synchronized Op add(String type, Object process, String f, Map<String, Object> value) {
    Op op = new Op(ops.size(), System.nanoTime() - start, type, process, f, Map.copyOf(value));
    ops.add(op);
    try {
      out.write(json(op));
      out.newLine();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return op;
  }

  synchronized List<Op> ops() {
    return List.copyOf(ops);
  }

  static Map<String, Object> value(Object... pairs) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      if (pairs[i + 1] != null) {
        map.put((String) pairs[i], pairs[i + 1]);
      }
    }
    return map;
  }

  private static String json(Op op) {
    StringBuilder s = new StringBuilder("{");
    s.append("\"index\":").append(op.index());
    s.append(",\"time\":").append(op.time());
    s.append(",\"type\":").append(quote(op.type()));
    s.append(",\"process\":")
        .append(
            op.process() instanceof Number n ? n.toString() : quote(String.valueOf(op.process())));
    s.append(",\"f\":").append(quote(op.f()));
    s.append(",\"value\":{");
    boolean first = true;
    for (Map.Entry<String, Object> e : new java.util.TreeMap<>(op.value()).entrySet()) {
      s.append(first ? "" : ",").append(quote(e.getKey())).append(':');
      Object v = e.getValue();
      s.append(
          v instanceof Number || v instanceof Boolean ? v.toString() : quote(String.valueOf(v)));
      first = false;
    }
    return s.append("}}").toString();
  }

  static String quote(String v) {
    StringBuilder s = new StringBuilder("\"");
    for (char c : v.toCharArray()) {
      switch (c) {
        case '"' -> s.append("\\\"");
        case '\\' -> s.append("\\\\");
        case '\n' -> s.append("\\n");
        case '\r' -> s.append("\\r");
        case '\t' -> s.append("\\t");
        default -> {
          if (c < 0x20) {
            s.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            s.append(c);
          }
        }
      }
    }
    return s.append('"').toString();
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
  }
}
