package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.ClaimAttempt;
import dev.idemkit.spi.NewRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The claim reads back only the time it was made; the rest of the record it hands the engine is
 * made in Java from what the store bound. That record must be the one stored, to the microsecond,
 * on the database's clock and on a clock given to the store (whose nanoseconds the database
 * rounds).
 */
class ClaimedRecordIT {

  private static final Duration LEASE = Duration.ofMillis(30_123);
  private static final Duration TTL = Duration.ofHours(24).plusMillis(7);

  private static DataSource dataSource;

  @BeforeAll
  static void database() {
    dataSource = TestDatabase.embedded().dataSource();
  }

  @Test
  void onTheDatabasesClockTheClaimedRecordIsTheStoredOne() throws Exception {
    assertClaimedIsStored(PostgresIdempotencyStore.create(dataSource));
  }

  @Test
  void onAGivenClockTheClaimedRecordIsTheStoredOne() throws Exception {
    Clock clock = Clock.fixed(Instant.parse("2031-05-06T07:08:09.123456789Z"), ZoneOffset.UTC);
    PostgresIdempotencyStore store =
        PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource)).clock(clock).build();
    IdempotencyRecord claimed = assertClaimedIsStored(store);
    assertThat(claimed.createdAt()).isEqualTo(Instant.parse("2031-05-06T07:08:09.123457Z"));
  }

  private static IdempotencyRecord assertClaimedIsStored(PostgresIdempotencyStore store)
      throws Exception {
    ScopedKey id = ScopedKey.of("tenant-claimed-" + UUID.randomUUID(), "pay", "k-1");
    Fingerprint fingerprint = Fingerprint.of(Map.of("amount", "10.00"));
    IdempotencyRecord claimed =
        store.inTransaction(
            tx -> {
              ClaimAttempt attempt = store.claim(tx, new NewRecord(id, fingerprint, TTL), LEASE);
              assertThat(attempt).isInstanceOf(ClaimAttempt.Inserted.class);
              return ((ClaimAttempt.Inserted) attempt).record();
            });
    IdempotencyRecord stored = store.find(id).orElseThrow();
    assertThat(claimed).isEqualTo(stored);
    assertThat(claimed.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(claimed.fencingToken()).isEqualTo(1);
    assertThat(claimed.lockedUntil()).isEqualTo(claimed.createdAt().plus(LEASE));
    assertThat(claimed.expiresAt()).isEqualTo(claimed.createdAt().plus(TTL));
    return claimed;
  }
}
