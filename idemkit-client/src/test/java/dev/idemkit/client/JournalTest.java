package dev.idemkit.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal file: what a started operation leaves, what a restart reads back, and what a crash in
 * mid-write leaves. A "crash" here is closing the journal without writing DONE.
 */
class JournalTest {

  @TempDir Path dir;

  private static PendingOperation op(String id, String key, String body) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Content-Type", "application/json");
    headers.put("Api-Version", "2024-01-01");
    return new PendingOperation(
        id, key, "POST", "/v1/payments?x=1", body.getBytes(StandardCharsets.UTF_8), headers);
  }

  @Test
  void aStartedOperationSurvivesACrashWithItsKeyBodyAndHeaders() throws IOException {
    Path file = dir.resolve("j/client.journal");
    try (Journal journal = Journal.open(file)) {
      journal.start(op("op-1", "key-1", "{\"amount\":\"10.00\",\"note\":\"café ✓\"}"));
      // crash: no DONE
    }

    try (Journal reopened = Journal.open(file)) {
      List<PendingOperation> pending = reopened.pending();
      assertThat(pending).hasSize(1);
      PendingOperation p = pending.get(0);
      assertThat(p.operationId()).isEqualTo("op-1");
      assertThat(p.key()).isEqualTo("key-1");
      assertThat(p.method()).isEqualTo("POST");
      assertThat(p.path()).isEqualTo("/v1/payments?x=1");
      assertThat(p.bodyAsString()).isEqualTo("{\"amount\":\"10.00\",\"note\":\"café ✓\"}");
      assertThat(p.headers())
          .containsExactly(
              Map.entry("Content-Type", "application/json"),
              Map.entry("Api-Version", "2024-01-01"));
    }
  }

  @Test
  void theFileIsOneLinePerEventAsDocumented() throws IOException {
    Path file = dir.resolve("client.journal");
    try (Journal journal = Journal.open(file)) {
      journal.start(op("op-1", "key-1", "{}"));
      journal.start(new PendingOperation("op-2", "key-2", "POST", "/v1/x", new byte[0], Map.of()));
      journal.done("op-1");
    }
    List<String> lines = Files.readAllLines(file);
    assertThat(lines).hasSize(3);
    assertThat(lines.get(0))
        .startsWith("START op-1 key-1 POST /v1/payments?x=1 " + b64("{}") + " ");
    assertThat(lines.get(1)).isEqualTo("START op-2 key-2 POST /v1/x - -");
    assertThat(lines.get(2)).isEqualTo("DONE op-1");
  }

  @Test
  void doneRemovesAnOperationAndReopeningCompactsTheFile() throws IOException {
    Path file = dir.resolve("client.journal");
    try (Journal journal = Journal.open(file)) {
      journal.start(op("op-1", "key-1", "{}"));
      journal.start(op("op-2", "key-2", "{}"));
      journal.start(op("op-3", "key-3", "{}"));
      journal.done("op-2");
      journal.discard("op-3");
      assertThat(journal.pending())
          .extracting(PendingOperation::operationId)
          .containsExactly("op-1");
    }
    assertThat(Files.readAllLines(file)).hasSize(5);

    try (Journal reopened = Journal.open(file)) {
      assertThat(reopened.pending()).extracting(PendingOperation::key).containsExactly("key-1");
      assertThat(Files.readAllLines(file)).hasSize(1).allMatch(l -> l.startsWith("START op-1 "));
      reopened.done("op-1");
    }
    assertThat(Files.readAllLines(file)).hasSize(2).endsWith("DONE op-1");

    try (Journal empty = Journal.open(file)) {
      assertThat(empty.pending()).isEmpty();
    }
    assertThat(Files.size(file)).isZero();
  }

  @Test
  void aTornLastLineIsIgnoredAndRemoved() throws IOException {
    Path file = dir.resolve("client.journal");
    try (Journal journal = Journal.open(file)) {
      journal.start(op("op-1", "key-1", "{}"));
    }
    // A crash while appending the next START: part of a line, no newline.
    Files.writeString(file, "START op-2 key-2 POST /v1/payments eyJh", StandardOpenOption.APPEND);

    try (Journal reopened = Journal.open(file)) {
      assertThat(reopened.pending())
          .extracting(PendingOperation::operationId)
          .containsExactly("op-1");
      reopened.start(op("op-3", "key-3", "{}"));
    }
    try (Journal again = Journal.open(file)) {
      assertThat(again.pending())
          .extracting(PendingOperation::operationId)
          .containsExactly("op-1", "op-3");
    }
    assertThat(Files.readString(file)).doesNotContain("op-2");
  }

  @Test
  void aNewJournalFileHasItsDirectoryEntrySynced() throws IOException {
    Path file = dir.resolve("new").resolve("client.journal");
    List<Path> synced = new java.util.ArrayList<>();
    Journal.DirectorySync recording =
        directory -> {
          assertThat(file).as("the file exists when its directory is synced").exists();
          synced.add(directory);
        };

    try (Journal journal = Journal.open(file, recording)) {
      journal.start(op("op-1", "key-1", "{}"));
    }
    assertThat(synced).containsExactly(file.getParent());

    synced.clear();
    try (Journal reopened = Journal.open(file, recording)) {
      assertThat(reopened.pending()).hasSize(1);
    }
    assertThat(synced).as("an existing, compact file needs no sync").isEmpty();
  }

  @Test
  void aTornTailThatCannotBeCompactedAwayKeepsThePendingOperations() throws IOException {
    Path file = dir.resolve("client.journal");
    try (Journal journal = Journal.open(file)) {
      journal.start(op("op-1", "key-1", "{}"));
      journal.start(op("op-2", "key-2", "{}"));
    }
    // The disk filled up while appending the next START; and no room for the compacted copy
    // (stood for by a directory where the temporary copy would go).
    Files.writeString(file, "START op-9 key-9 POST /v1/payments eyJh", StandardOpenOption.APPEND);
    Path temp = dir.resolve("client.journal.tmp");
    Files.createDirectories(temp.resolve("occupied"));

    try (Journal reopened = Journal.open(file)) {
      assertThat(reopened.pending())
          .extracting(PendingOperation::operationId)
          .containsExactly("op-1", "op-2");
      reopened.start(op("op-3", "key-3", "{}"));
    }
    try (Journal again = Journal.open(file)) {
      assertThat(again.pending())
          .extracting(PendingOperation::operationId)
          .containsExactly("op-1", "op-2", "op-3");
    }
    assertThat(Files.readString(file)).doesNotContain("op-9");
  }

  @Test
  void anUnreadableCompleteLastLineIsIgnoredButACorruptMiddleLineIsAnError() throws IOException {
    Path file = dir.resolve("client.journal");
    try (Journal journal = Journal.open(file)) {
      journal.start(op("op-1", "key-1", "{}"));
    }
    Files.writeString(file, "START op-2 key-2 POST\n", StandardOpenOption.APPEND);
    try (Journal reopened = Journal.open(file)) {
      assertThat(reopened.pending()).hasSize(1);
    }

    Files.writeString(file, "garbage\nDONE op-1\n", StandardOpenOption.APPEND);
    assertThatThrownBy(() -> Journal.open(file))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("corrupt at line 2");
  }

  @Test
  void oneClientAtATime() throws IOException {
    Path file = dir.resolve("client.journal");
    try (Journal journal = Journal.open(file)) {
      assertThatThrownBy(() -> Journal.open(file))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("in use by another client");
      journal.start(op("op-1", "key-1", "{}"));
    }
    try (Journal next = Journal.open(file)) {
      assertThat(next.pending()).hasSize(1);
    }
  }

  @Test
  void aClosedJournalStartsNothing() throws IOException {
    Journal journal = Journal.open(dir.resolve("client.journal"));
    journal.close();
    journal.close();
    assertThatThrownBy(() -> journal.start(op("op-1", "key-1", "{}")))
        .isInstanceOf(IllegalStateException.class);
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }
}
