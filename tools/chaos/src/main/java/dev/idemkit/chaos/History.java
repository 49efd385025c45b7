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
import java.util.TreeMap;

/**
 * Every client operation and nemesis action in Jepsen's model: an {@code invoke}, then its
 * completion, {@code ok} (it happened), {@code fail} (it definitely did not) or {@code info} (the
 * client cannot tell). Written as JSON lines with Jepsen's op fields ({@code index}, {@code time}
 * in nanoseconds, {@code type}, {@code process}, {@code f}, {@code value}) for reading by people
 * and scripts, and kept in memory for the checker. After the accounting, {@link #writeEdn} writes
 * the same history as Jepsen ops in EDN, with the accounting's observed effects as a final read,
 * for Jepsen's set checkers ({@code jepsen.checker/set}, {@code set-full}).
 */
final class History implements AutoCloseable {

  /** One line of the history, written as one JSON object with these fields in this order. */
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
      out.write(Json.write(op));
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

  /**
   * An EDN string: a JSON string literal is one (Clojure's reader takes the same escapes, {@code
   * \\uXXXX} included).
   */
  private static String ednString(String v) {
    return Json.write(v);
  }

  /**
   * Writes the history as Jepsen ops in EDN, one map a line: each client operation becomes an
   * {@code :add} of a unique integer (its {@code :element}, numbered in invocation order; the
   * operation id and what the client was told are kept under {@code :op} and {@code :detail}),
   * nemesis actions keep their {@code :f} under process {@code :nemesis}, and a final {@code :read}
   * (an {@code :invoke}, then an {@code :ok}) by a process of its own returns every element whose
   * effect exists, once per effect found ({@code observed}: operation id → effects), so that an
   * element applied twice appears twice in the read. An effect for an operation never invoked gets
   * an element no {@code :add} names. Answers the element of each operation id.
   */
  synchronized Map<String, Integer> writeEdn(Path file, Map<String, Integer> observed)
      throws IOException {
    Map<String, Integer> elements = new LinkedHashMap<>();
    int readProcess = 0;
    for (Op op : ops) {
      if (op.process() instanceof Integer p) {
        readProcess = Math.max(readProcess, p + 1);
        if (op.type().equals("invoke") && op.value().get("op") instanceof String id) {
          elements.putIfAbsent(id, elements.size());
        }
      }
    }
    Map<String, Integer> unexpected = new TreeMap<>();
    for (String id : new TreeMap<>(observed).keySet()) {
      if (!elements.containsKey(id)) {
        unexpected.put(id, elements.size() + unexpected.size());
      }
    }
    long time = ops.isEmpty() ? 0 : ops.get(ops.size() - 1).time();
    try (BufferedWriter edn = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (Op op : ops) {
        edn.write(edn(op, elements));
        edn.newLine();
      }
      List<Integer> read = new ArrayList<>();
      for (Map.Entry<String, Integer> e : new TreeMap<>(observed).entrySet()) {
        Integer element = elements.getOrDefault(e.getKey(), unexpected.get(e.getKey()));
        for (int i = 0; i < e.getValue(); i++) {
          read.add(element);
        }
      }
      read.sort(null);
      StringBuilder values = new StringBuilder("[");
      for (int i = 0; i < read.size(); i++) {
        values.append(i == 0 ? "" : " ").append(read.get(i));
      }
      values.append(']');
      edn.write(
          String.format(
              Locale.ROOT,
              "{:index %d, :time %d, :type :invoke, :process %d, :f :read, :value nil}",
              ops.size(),
              time + 1,
              readProcess));
      edn.newLine();
      edn.write(
          String.format(
              Locale.ROOT,
              "{:index %d, :time %d, :type :ok, :process %d, :f :read, :value %s}",
              ops.size() + 1,
              time + 2,
              readProcess,
              values));
      edn.newLine();
    }
    Map<String, Integer> all = new LinkedHashMap<>(elements);
    all.putAll(unexpected);
    return all;
  }

  private static String edn(Op op, Map<String, Integer> elements) {
    StringBuilder s = new StringBuilder("{");
    s.append(":index ").append(op.index());
    s.append(", :time ").append(op.time());
    s.append(", :type :").append(op.type());
    boolean client = op.process() instanceof Integer;
    s.append(", :process ").append(client ? op.process().toString() : ":" + op.process());
    Map<String, Object> detail = new TreeMap<>(op.value());
    if (client && detail.remove("op") instanceof String id) {
      s.append(", :f :add, :value ").append(elements.get(id));
      s.append(", :kind :").append(op.f());
      s.append(", :op ").append(ednString(id));
    } else {
      s.append(", :f :").append(op.f()).append(", :value nil");
    }
    s.append(", :detail {");
    boolean first = true;
    for (Map.Entry<String, Object> e : detail.entrySet()) {
      s.append(first ? "" : ", ").append(':').append(e.getKey()).append(' ');
      Object v = e.getValue();
      s.append(
          v instanceof Number || v instanceof Boolean
              ? v.toString()
              : ednString(String.valueOf(v)));
      first = false;
    }
    return s.append("}}").toString();
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
  }
}
