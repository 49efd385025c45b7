package dev.idemkit.examples.quickstart;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.jdbc.PostgresIdempotencyStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java example of docs/getting-started.md ("Using it from Java"), compiled and run; and the
 * page must show it as it is here.
 */
class ReadmeExampleTest {

  static String insertPayment(Connection c, String amount, String currency) throws Exception {
    String id = "pay_" + UUID.randomUUID();
    try (PreparedStatement ps =
        c.prepareStatement(
            "insert into payment (id, amount, currency) values (?, ?::numeric, ?)")) {
      ps.setString(1, id);
      ps.setString(2, amount);
      ps.setString(3, currency);
      ps.executeUpdate();
    }
    return id;
  }

  static String answer(DataSource dataSource, String tenantId, String idempotencyKey) {
    // README:start
    Idempotency idempotency = Idempotency.create(PostgresIdempotencyStore.create(dataSource));

    ScopedKey id = ScopedKey.of(tenantId, "create_payment", idempotencyKey);
    Fingerprint command = Fingerprint.of(Map.of("amount", "10.00", "currency", "EUR"));

    Outcome outcome =
        idempotency.execute(
            id,
            command,
            ctx -> {
              // Business rows go through the record's own transaction: all or nothing.
              String paymentId = insertPayment(ctx.unwrap(Connection.class), "10.00", "EUR");
              byte[] body = ("{\"paymentId\":\"" + paymentId + "\"}").getBytes(UTF_8);
              return OperationResult.success(
                  StoredResponse.of(201, Map.of("Content-Type", "application/json"), body));
            });

    if (outcome instanceof Outcome.Executed executed) {
      return "201 " + new String(executed.response().body(), UTF_8);
    } else if (outcome instanceof Outcome.Replayed replayed) {
      return "201 (replayed) " + new String(replayed.response().body(), UTF_8);
    } else if (outcome instanceof Outcome.Mismatch) {
      return "422 IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST";
    } else if (outcome instanceof Outcome.InProgress inProgress) {
      return "409 Retry-After: " + inProgress.retryAfter().toSeconds();
    } else {
      return "other: " + outcome; // OutcomePending, Rejected, QuotaExceeded: see Outcome's Javadoc
    }
    // README:end
  }

  @Test
  void theExampleRunsAndReplays(@TempDir Path dataDir) throws Exception {
    try (IdemkitDatabase db = IdemkitDatabase.embedded(dataDir, 4)) {
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.execute("create table payment (id text primary key, amount numeric, currency text)");
      }
      String first = answer(db.dataSource(), "tenant-a", "key-1");
      String retry = answer(db.dataSource(), "tenant-a", "key-1");

      assertThat(first).startsWith("201 {\"paymentId\":\"pay_");
      assertThat(retry).isEqualTo("201 (replayed) " + first.substring(4));
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("select count(*) from payment")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
      }
    }
  }

  @Test
  void thePageShowsThisExampleAsItIs() throws Exception {
    String source =
        Files.readString(
            Path.of("src/test/java/dev/idemkit/examples/quickstart/ReadmeExampleTest.java"));
    String snippet =
        source.substring(
            source.indexOf("// README:start") + "// README:start".length(),
            source.indexOf("    // README:end"));
    String page = Files.readString(Path.of("../../docs/getting-started.md"));
    assertThat(strip(page)).contains(strip(snippet));
  }

  private static String strip(String text) {
    return text.lines()
        .map(String::strip)
        .filter(l -> !l.isEmpty())
        .collect(Collectors.joining("\n"));
  }
}
