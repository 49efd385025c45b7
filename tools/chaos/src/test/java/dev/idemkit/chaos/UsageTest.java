package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idemkit.testing.postgres.ReplicatedPostgres.Replication;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The chaos run's command line: a usage error is refused before anything starts (no database, no
 * instance), with a message naming the option; {@code main} turns it into exit status 2, apart from
 * 1, which says the accounting failed.
 */
class UsageTest {

  @Test
  void helpAnswersWithoutRunning() throws Exception {
    assertThat(ChaosRun.runMain(new String[] {"--help"})).isZero();
    assertThat(ChaosOptions.usage())
        .startsWith("Usage: java -jar idemkit-chaos.jar [options]   (docs/proof.md)")
        .contains(
            "--duration D",
            "--clients N",
            "--seed N",
            "--nemesis B",
            "--broken-store S",
            "--database DB",
            "--nemesis-actions A,B",
            "--request-timeout D",
            "--service-jar PATH",
            "--out DIR",
            "--help",
            "Exit status");
  }

  @Test
  void theOptionsMakeTheRunsConfigurationAndTheRestKeepTheirDefaults() {
    ChaosRun.Config config =
        ChaosOptions.parse(
                new String[] {
                  "--duration", "PT15S",
                  "--clients", "3",
                  "--nemesis", "false",
                  "--broken-store", "late-owner-overwrites",
                  "--out", "/tmp/x",
                  "--clients", "4"
                },
                System.out)
            .orElseThrow();

    assertThat(config)
        .isEqualTo(
            new ChaosRun.Config(
                Path.of("examples/payments-service/target/payments-service.jar"),
                Path.of("/tmp/x"),
                Duration.ofSeconds(15),
                4,
                false,
                "late-owner-overwrites",
                Duration.ofSeconds(3),
                1,
                "single",
                List.of("pause", "terminate-connections", "kill", "stall-consumers")));
    assertThat(
            ChaosOptions.parse(
                new String[] {"--seed", "42", "--request-timeout", "PT0.15S"}, System.out))
        .hasValueSatisfying(
            c -> {
              assertThat(c.seed()).isEqualTo(42);
              assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(150));
              assertThat(c.duration()).isEqualTo(Duration.ofSeconds(60));
              assertThat(c.nemesis()).isTrue();
              assertThat(c.brokenStore()).isNull();
            });
    assertThat(
            ChaosOptions.parse(
                new String[] {
                  "--database",
                  "replicated-sync",
                  "--nemesis-actions",
                  "failover,terminate-connections"
                },
                System.out))
        .hasValueSatisfying(
            c -> {
              assertThat(c.replication()).hasValue(Replication.SYNCHRONOUS);
              assertThat(c.nemesisActions()).containsExactly("failover", "terminate-connections");
            });
  }

  @Test
  void badOptionsAreRefusedBeforeAnythingStarts() {
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--duration", "45s"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--duration takes an ISO-8601 duration");
    for (String d : new String[] {"PT0S", "-PT5S", "PT-1S"}) {
      assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--duration", d}))
          .as(d)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "--duration takes a duration longer than zero, such as PT45S or PT0.5S, not '"
                  + d
                  + "'");
      assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--request-timeout", d}))
          .as(d)
          .hasMessageContaining("--request-timeout takes a duration longer than zero");
    }
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--request-timeout", "150ms"}))
        .hasMessageContaining("--request-timeout takes an ISO-8601 duration");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--clients"}))
        .hasMessage("--clients needs a value");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--clients", "x"}))
        .hasMessageContaining("--clients takes a whole number");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--broken-store", "typo"}))
        .hasMessageContaining("find-then-insert or late-owner-overwrites");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--database", "replicated"}))
        .hasMessageContaining("single, own, replicated-sync, replicated-async or shards");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--nemesis-actions", "kill,flood"}))
        .hasMessageContaining("--nemesis-actions takes faults among pause,");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--nemesis-actions", "failover"}))
        .hasMessage(
            "--nemesis-actions failover needs --database replicated-sync or replicated-async");
    assertThatThrownBy(
            () ->
                ChaosRun.runMain(
                    new String[] {"--nemesis-actions", "kill,failover", "--database", "own"}))
        .hasMessage(
            "--nemesis-actions failover needs --database replicated-sync or replicated-async");
    assertThatThrownBy(
            () ->
                ChaosRun.runMain(new String[] {"--nemesis-actions", "cut-network,freeze-database"}))
        .hasMessage(
            "--nemesis-actions freeze-database needs the payments database on a server of the"
                + " run's own: --database own, replicated-sync or replicated-async");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--nemesis-actions", "move-tenant"}))
        .hasMessage("--nemesis-actions move-tenant needs --database shards");
    assertThatThrownBy(
            () ->
                ChaosRun.runMain(
                    new String[] {"--nemesis-actions", "freeze-database", "--database", "shards"}))
        .hasMessageContaining("--nemesis-actions freeze-database needs the payments database");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--nemesis", "yes"}))
        .hasMessageContaining("true or false");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--frobnicate", "1"}))
        .hasMessageContaining("unknown option --frobnicate");
    assertThatThrownBy(
            () -> ChaosRun.runMain(new String[] {"--service-jar", "/nonexistent/service.jar"}))
        .hasMessageContaining("no service jar at /nonexistent/service.jar");
  }

  @Test
  void aNumberOutOfItsRangeOrNotWholeIsRefused() {
    assertThat(refusal("--clients", "0"))
        .isEqualTo("--clients takes a number from 1 to 1000, not 0");
    assertThat(refusal("--clients", "1001")).endsWith("from 1 to 1000, not 1001");
    assertThat(refusal("--seed", "1.5")).isEqualTo("--seed takes a whole number, not '1.5'");
  }

  private static String refusal(String... args) {
    Throwable refused = catchThrowable(() -> ChaosRun.runMain(args));
    assertThat(refused).isInstanceOf(ChaosOptions.UsageException.class);
    return refused.getMessage();
  }

  /** {@code --duration=PT5M} was "unknown option --duration=PT5M" and left the user guessing. */
  @Test
  void anOptionWithItsValueAfterAnEqualsSignIsToldHowToGiveIt() {
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--duration=PT5M"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "unknown option --duration=PT5M; give the value as the next argument: --duration PT5M");
    assertThatThrownBy(() -> ChaosRun.runMain(new String[] {"--frobnicate=1", "x"}))
        .hasMessage("unknown option --frobnicate=1");
  }
}
