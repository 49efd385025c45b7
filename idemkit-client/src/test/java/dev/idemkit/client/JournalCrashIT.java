package dev.idemkit.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.client.internal.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client process killed in the middle of an operation whose answers never reach it, restarted
 * with its journal: it resumes the operation with the same key, gets the first answer replayed, and
 * the service holds exactly one payment.
 */
class JournalCrashIT {

  private static PaymentsServiceProcess service;

  @TempDir Path dir;

  @BeforeAll
  static void startService() throws Exception {
    service = PaymentsServiceProcess.start();
  }

  @AfterAll
  static void stopService() {
    if (service != null) {
      service.close();
    }
  }

  @Test
  void aKilledClientResumesWithItsJournalAndPaysOnce() throws Exception {
    String reference = "client-it-crash-" + UUID.randomUUID();
    Path journal = dir.resolve("client.journal");
    Path childLog = dir.resolve("child.log");

    try (FaultProxy blackHole =
        FaultProxy.start(service.port(), FaultProxy.always(FaultProxy.Fault.DROP), Duration.ZERO)) {
      Process child =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  JournalCrashMain.class.getName(),
                  journal.toString(),
                  blackHole.uri().toString(),
                  reference)
              .redirectErrorStream(true)
              .redirectOutput(childLog.toFile())
              .start();
      try {
        // The service executed the payment and answered; the answer was dropped; the child
        // retried (same key) and that answer was dropped too. Now kill it mid-operation.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (blackHole.forwarded() < 2 && child.isAlive() && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        assertThat(child.isAlive()).as("the client process is still retrying").isTrue();
        assertThat(blackHole.forwarded()).as(Files.readString(childLog)).isGreaterThanOrEqualTo(2);
      } finally {
        child.destroyForcibly();
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
      }
      System.out.println(
          "[client-it] killed the client after "
              + blackHole.forwarded()
              + " attempts; its output:");
      System.out.println(Files.readString(childLog));

      assertThat(blackHole.upstreamStatuses()).first().isEqualTo(201);
      assertThat(new HashSet<>(blackHole.keys())).hasSize(1);
    }

    String paymentId;
    try (IdempotentClient restarted =
        IdempotentClient.builder()
            .baseUri(service.uri())
            .bearerToken(PaymentsServiceProcess.API_KEY)
            .journal(journal)
            .build()) {
      List<PendingOperation> pending = restarted.journal().pending();
      assertThat(pending).hasSize(1);
      PendingOperation operation = pending.get(0);
      assertThat(operation.bodyAsString()).contains(reference);

      IdempotentResponse r = restarted.resume(operation);

      assertThat(r.status()).isEqualTo(201);
      assertThat(r.replayed()).as("the first attempt's stored answer").isTrue();
      assertThat(r.header("Idempotent-Replayed")).hasValue("true");
      assertThat(r.attempts()).isEqualTo(1);
      assertThat(r.key()).isEqualTo(operation.key());
      assertThat(restarted.journal().pending()).isEmpty();
      paymentId = Json.string(r.bodyAsString(), "paymentId").orElseThrow();
    }
    assertThat(service.payments(reference)).isEqualTo(1);
    assertThat(service.providerCharges(Set.of(paymentId))).isEqualTo(1);
  }
}
