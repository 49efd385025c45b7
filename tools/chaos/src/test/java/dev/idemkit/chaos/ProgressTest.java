package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run of minutes says how far it got while the clients run (every {@link Progress#EVERY}),
 * instead of nothing on either stream until its summary.
 */
class ProgressTest {

  @TempDir Path dir;

  @Test
  void theProgressLineCountsTheClientsOperationsAndTheNemesisActionsWithFailovers()
      throws Exception {
    try (History history = new History(dir.resolve("history.jsonl"))) {
      for (int p = 0; p < 4; p++) {
        history.add("invoke", p, "create-payment", History.value("op", "op-" + p));
      }
      history.add("ok", 0, "create-payment", History.value("op", "op-0", "status", 201));
      history.add("ok", 1, "create-payment", History.value("op", "op-1", "status", 201));
      history.add("fail", 2, "create-payment", History.value("op", "op-2", "status", 402));
      // The nemesis's own invoke/info pairs are not operations.
      history.add("invoke", "nemesis", "kill", History.value("instance", "a"));
      history.add("info", "nemesis", "kill", History.value("instance", "a"));
      Nemesis nemesis =
          new Nemesis(
              null,
              history,
              Duration.ofSeconds(6),
              Duration.ofSeconds(3),
              1,
              List.of("kill", "terminate-connections", "failover"));
      nemesis.did("kill");
      nemesis.did("terminate-connections");
      nemesis.did("terminate-connections");
      nemesis.did("failover");

      assertThat(
              Progress.line(Duration.ofSeconds(20), Duration.ofSeconds(45), history.ops(), nemesis))
          .isEqualTo(
              "20 s of 45 s: 3 operations answered (ok 2, fail 1, info 0), 1 running; nemesis: 1"
                  + " kill -9, 2 pg_terminate_backend, 1 failovers");
      // A tick a little after the deadline says no more than the duration.
      assertThat(
              Progress.line(Duration.ofSeconds(47), Duration.ofSeconds(45), history.ops(), nemesis))
          .startsWith("45 s of 45 s: ");
    }
  }
}
