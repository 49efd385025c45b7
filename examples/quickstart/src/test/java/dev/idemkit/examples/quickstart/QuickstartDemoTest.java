package dev.idemkit.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Outcome;
import dev.idemkit.jdbc.IdemkitDatabase;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QuickstartDemoTest {

  @Test
  void theDemoShowsOneExecutionPerKeyAndKeepsRecordsAcrossRestarts(@TempDir Path dataDir)
      throws Exception {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    QuickstartDemo.Summary summary;
    try (IdemkitDatabase db = IdemkitDatabase.embedded(dataDir, 40)) {
      summary = new QuickstartDemo(db.dataSource(), new PrintStream(printed, true)).run();
    }

    assertThat(summary.first()).isInstanceOf(Outcome.Executed.class);
    assertThat(summary.retry()).isInstanceOf(Outcome.Replayed.class);
    assertThat(summary.retry().storedResponse()).isEqualTo(summary.first().storedResponse());
    assertThat(summary.changedAmount()).isInstanceOf(Outcome.Mismatch.class);
    assertThat(summary.raceOutcomes()).containsEntry("Executed", 1);
    assertThat(summary.raceOutcomes().values().stream().mapToInt(Integer::intValue).sum())
        .isEqualTo(32);
    assertThat(summary.paymentsForFirstKey()).isEqualTo(1);
    assertThat(summary.paymentsForRaceKey()).isEqualTo(1);
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("Records kept from earlier runs: 0")
        .contains("Replayed  -> 201");

    ByteArrayOutputStream again = new ByteArrayOutputStream();
    try (IdemkitDatabase db = IdemkitDatabase.embedded(dataDir, 40)) {
      new QuickstartDemo(db.dataSource(), new PrintStream(again, true)).run();
    }
    assertThat(again.toString(StandardCharsets.UTF_8))
        .contains("Records kept from earlier runs: 2");
  }
}
