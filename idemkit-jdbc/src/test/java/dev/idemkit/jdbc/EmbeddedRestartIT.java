package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded default keeps its data in a directory: a restart loses nothing. */
class EmbeddedRestartIT {

  @Test
  void aKeyCompletedBeforeARestartStillReplaysAfterIt(@TempDir Path dataDir) {
    ScopedKey id = ScopedKey.of("tenant-a", "create_payment", "before-restart");
    Fingerprint command = Fingerprint.of(Map.of("amount", "10.00", "currency", "EUR"));
    AtomicInteger runs = new AtomicInteger();
    StoredResponse created =
        StoredResponse.of(
            201,
            Map.of("Content-Type", "application/json", "Location", "/v1/payments/p1"),
            "{\"paymentId\":\"p1\"}".getBytes(StandardCharsets.UTF_8));

    Outcome first;
    try (IdemkitDatabase db = IdemkitDatabase.embedded(dataDir, 2)) {
      first = pay(db, id, command, runs, created);
    }
    Outcome afterRestart;
    try (IdemkitDatabase db = IdemkitDatabase.embedded(dataDir, 2)) {
      afterRestart = pay(db, id, command, runs, created);
    }

    assertThat(first).isInstanceOf(Outcome.Executed.class);
    assertThat(afterRestart).isInstanceOf(Outcome.Replayed.class);
    assertThat(((Outcome.Replayed) afterRestart).response()).isEqualTo(created);
    // The retry ran the operation once more and rolled it back when its insert of the record met
    // the one from before the restart (a local operation writes its record last, contract §5).
    assertThat(runs).hasValue(2);
  }

  private static Outcome pay(
      IdemkitDatabase db,
      ScopedKey id,
      Fingerprint command,
      AtomicInteger runs,
      StoredResponse created) {
    return Idempotency.create(PostgresIdempotencyStore.create(db.dataSource()))
        .execute(
            id,
            command,
            ctx -> {
              runs.incrementAndGet();
              return OperationResult.success(created);
            });
  }
}
