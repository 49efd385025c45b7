package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The EDN history is what Jepsen's set checkers read: each line parses as a Jepsen op, client
 * operations are {@code :add}s of unique integers, and the final {@code :read} holds every element
 * whose effect exists, once per effect, so that the set checker's arithmetic (run here on the
 * parsed file) finds the lost, recovered, unexpected and duplicated operations the accounting
 * found.
 */
class HistoryTest {

  @TempDir Path dir;

  /** The JSON lines docs/proof.md describes: Jepsen's op fields in order, the value's by name. */
  @Test
  void eachOperationIsOneJsonLineWithItsFieldsInOrder() throws Exception {
    Path jsonl = dir.resolve("ops.jsonl");
    try (History history = new History(jsonl)) {
      history.add("invoke", 0, "create-payment", History.value("op", "op-a", "amount", "10.00"));
      history.add("invoke", "nemesis", "kill", History.value("instance", "service-a"));
      history.add(
          "info",
          1,
          "create-order",
          History.value("replayed", false, "error", "gave up \"x\"\n", "attempts", 3, "id", null));
    }

    assertThat(Files.readAllLines(jsonl))
        .extracting(line -> line.replaceFirst("\"time\":\\d+,", "\"time\":T,"))
        .containsExactly(
            "{\"index\":0,\"time\":T,\"type\":\"invoke\",\"process\":0,\"f\":\"create-payment\","
                + "\"value\":{\"amount\":\"10.00\",\"op\":\"op-a\"}}",
            "{\"index\":1,\"time\":T,\"type\":\"invoke\",\"process\":\"nemesis\",\"f\":\"kill\","
                + "\"value\":{\"instance\":\"service-a\"}}",
            "{\"index\":2,\"time\":T,\"type\":\"info\",\"process\":1,\"f\":\"create-order\","
                + "\"value\":{\"attempts\":3,\"error\":\"gave up \\\"x\\\"\\n\",\"replayed\":false}}");
  }

  @Test
  void theEdnHistoryParsesAsJepsenOpsAndItsFinalReadReproducesTheAccounting() throws Exception {
    Map<String, Integer> elements;
    Path edn = dir.resolve("history.edn");
    try (History history = new History(dir.resolve("history.jsonl"))) {
      history.add("invoke", 0, "create-payment", History.value("op", "op-a", "amount", "10.00"));
      history.add("invoke", 1, "create-order", History.value("op", "op-b", "amount", "5.00"));
      history.add("ok", 0, "create-payment", History.value("op", "op-a", "status", 201));
      history.add("invoke", "nemesis", "kill", History.value("instance", "service-a"));
      history.add("info", "nemesis", "kill", History.value("instance", "service-a"));
      history.add(
          "info", 1, "create-order", History.value("op", "op-b", "error", "gave up \"x\"\n"));
      history.add("invoke", 2, "create-payment", History.value("op", "op-c"));
      history.add("fail", 2, "create-payment", History.value("op", "op-c", "status", 402));
      history.add("invoke", 0, "create-payment", History.value("op", "op-d"));
      history.add("ok", 0, "create-payment", History.value("op", "op-d", "replayed", true));
      history.add("invoke", 1, "create-order", History.value("op", "op-e"));
      history.add("ok", 1, "create-order", History.value("op", "op-e", "status", 201));
      // What the accounting found: op-a and op-b applied once, op-e twice, op-d never, and an
      // effect for op-z, which nobody invoked.
      elements = history.writeEdn(edn, Map.of("op-a", 1, "op-b", 1, "op-e", 2, "op-z", 1));
    }

    List<String> lines = Files.readAllLines(edn);
    assertThat(lines).hasSize(12 + 2);
    List<Map<Object, Object>> ops = new ArrayList<>();
    for (String line : lines) {
      Object parsed = new Edn(line).read();
      assertThat(parsed).as(line).isInstanceOf(Map.class);
      @SuppressWarnings("unchecked")
      Map<Object, Object> op = (Map<Object, Object>) parsed;
      ops.add(op);
    }
    long lastTime = -1;
    for (int i = 0; i < ops.size(); i++) {
      Map<Object, Object> op = ops.get(i);
      assertThat(op.get(kw("index"))).as("dense indices").isEqualTo((long) i);
      assertThat((Long) op.get(kw("time"))).isGreaterThanOrEqualTo(lastTime);
      lastTime = (Long) op.get(kw("time"));
      assertThat(op.get(kw("type"))).isIn(kw("invoke"), kw("ok"), kw("fail"), kw("info"));
    }
    // Elements in invocation order; op-z gets one no :add names.
    assertThat(elements).containsEntry("op-a", 0).containsEntry("op-b", 1);
    assertThat(elements).containsEntry("op-e", 4).containsEntry("op-z", 5);

    Map<Object, Object> first = ops.get(0);
    assertThat(first.get(kw("process"))).isEqualTo(0L);
    assertThat(first.get(kw("f"))).isEqualTo(kw("add"));
    assertThat(first.get(kw("value"))).isEqualTo(0L);
    assertThat(first.get(kw("kind"))).isEqualTo(kw("create-payment"));
    assertThat(first.get(kw("op"))).isEqualTo("op-a");
    assertThat(first.get(kw("detail"))).isEqualTo(Map.of(kw("amount"), "10.00"));
    Map<Object, Object> kill = ops.get(3);
    assertThat(kill.get(kw("process"))).isEqualTo(kw("nemesis"));
    assertThat(kill.get(kw("f"))).isEqualTo(kw("kill"));
    assertThat(kill.get(kw("detail"))).isEqualTo(Map.of(kw("instance"), "service-a"));
    Map<Object, Object> gaveUp = ops.get(5);
    assertThat(gaveUp.get(kw("type"))).isEqualTo(kw("info"));
    assertThat(gaveUp.get(kw("detail"))).isEqualTo(Map.of(kw("error"), "gave up \"x\"\n"));
    assertThat(ops.get(9).get(kw("detail"))).isEqualTo(Map.of(kw("replayed"), true));

    Map<Object, Object> readInvoke = ops.get(12);
    Map<Object, Object> read = ops.get(13);
    assertThat(readInvoke.get(kw("type"))).isEqualTo(kw("invoke"));
    assertThat(readInvoke.get(kw("f"))).isEqualTo(kw("read"));
    assertThat(read.get(kw("type"))).isEqualTo(kw("ok"));
    assertThat(read.get(kw("f"))).isEqualTo(kw("read"));
    assertThat(read.get(kw("process")))
        .as("a process of its own, the invoke's")
        .isEqualTo(3L)
        .isEqualTo(readInvoke.get(kw("process")));
    assertThat(read.get(kw("value"))).isEqualTo(List.of(0L, 1L, 4L, 4L, 5L));

    // jepsen.checker/set's arithmetic, and set-full's duplicates, on the parsed history.
    Set<Object> attempts = new HashSet<>();
    Set<Object> acknowledged = new HashSet<>();
    for (Map<Object, Object> op : ops) {
      if (kw("add").equals(op.get(kw("f")))) {
        if (kw("invoke").equals(op.get(kw("type")))) {
          attempts.add(op.get(kw("value")));
        } else if (kw("ok").equals(op.get(kw("type")))) {
          acknowledged.add(op.get(kw("value")));
        }
      }
    }
    @SuppressWarnings("unchecked")
    List<Object> finalRead = (List<Object>) read.get(kw("value"));
    Set<Object> present = new HashSet<>(finalRead);
    Set<Object> lost = new HashSet<>(acknowledged);
    lost.removeAll(present);
    Set<Object> unexpected = new HashSet<>(present);
    unexpected.removeAll(attempts);
    Set<Object> recovered = new HashSet<>(present);
    recovered.retainAll(attempts);
    recovered.removeAll(acknowledged);
    Map<Object, Integer> frequencies = new HashMap<>();
    finalRead.forEach(e -> frequencies.merge(e, 1, Integer::sum));
    Set<Object> duplicated = new HashSet<>();
    frequencies.forEach(
        (e, n) -> {
          if (n > 1) {
            duplicated.add(e);
          }
        });

    assertThat(lost).as("op-d: acknowledged, no effect").containsExactly(3L);
    assertThat(recovered).as("op-b: unknown, then found").containsExactly(1L);
    assertThat(unexpected).as("op-z: never invoked").containsExactly(5L);
    assertThat(duplicated).as("op-e: applied twice").containsExactly(4L);
    assertThat(attempts).doesNotContain(5L).contains(2L);
  }

  private static Edn.Keyword kw(String name) {
    return new Edn.Keyword(name);
  }

  /**
   * The EDN this history uses: maps, vectors, sets, keywords, integers, strings, nil and booleans.
   */
  private static final class Edn {
    record Keyword(String name) {}

    private final String s;
    private int i;

    Edn(String s) {
      this.s = s;
    }

    Object read() {
      Object v = value();
      skip();
      if (i != s.length()) {
        throw new IllegalArgumentException("trailing input at " + i + ": " + s);
      }
      return v;
    }

    private void skip() {
      while (i < s.length() && (Character.isWhitespace(s.charAt(i)) || s.charAt(i) == ',')) {
        i++;
      }
    }

    private Object value() {
      skip();
      char c = s.charAt(i);
      if (c == '{') {
        i++;
        Map<Object, Object> m = new LinkedHashMap<>();
        while (peek() != '}') {
          Object k = value();
          if (m.put(k, value()) != null) {
            throw new IllegalArgumentException("duplicate key " + k);
          }
        }
        i++;
        return m;
      }
      if (c == '[') {
        i++;
        List<Object> v = new ArrayList<>();
        while (peek() != ']') {
          v.add(value());
        }
        i++;
        return v;
      }
      if (c == '#' && s.charAt(i + 1) == '{') {
        i += 2;
        Set<Object> v = new LinkedHashSet<>();
        while (peek() != '}') {
          if (!v.add(value())) {
            throw new IllegalArgumentException("duplicate set element");
          }
        }
        i++;
        return v;
      }
      if (c == '"') {
        return string();
      }
      int start = i;
      while (i < s.length()
          && !Character.isWhitespace(s.charAt(i))
          && ",}]".indexOf(s.charAt(i)) < 0) {
        i++;
      }
      String token = s.substring(start, i);
      if (token.startsWith(":")) {
        if (!token.matches(":[a-zA-Z][a-zA-Z0-9*+!_?<>=./-]*")) {
          throw new IllegalArgumentException("bad keyword " + token);
        }
        return new Keyword(token.substring(1));
      }
      return switch (token) {
        case "nil" -> null;
        case "true" -> true;
        case "false" -> false;
        default -> Long.parseLong(token);
      };
    }

    private char peek() {
      skip();
      return s.charAt(i);
    }

    private String string() {
      StringBuilder b = new StringBuilder();
      i++;
      while (s.charAt(i) != '"') {
        char c = s.charAt(i++);
        if (c == '\\') {
          char e = s.charAt(i++);
          switch (e) {
            case 'n' -> b.append('\n');
            case 't' -> b.append('\t');
            case 'r' -> b.append('\r');
            case '"' -> b.append('"');
            case '\\' -> b.append('\\');
            case 'u' -> {
              b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
              i += 4;
            }
            default -> throw new IllegalArgumentException("bad escape \\" + e);
          }
        } else {
          b.append(c);
        }
      }
      i++;
      return b.toString();
    }
  }
}
