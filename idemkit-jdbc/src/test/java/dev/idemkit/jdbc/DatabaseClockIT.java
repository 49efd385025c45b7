package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The outbox's, deliveries' and inboxes' clock is the database server's: read from it, then counted
 * forward with the monotonic clock; one per data source; and a server that cannot be read leaves it
 * counting, not stopped.
 */
class DatabaseClockIT {

  private final DataSource db = TestDatabase.embedded().dataSource();

  @Test
  void itTellsTheServersTimeAndIsSharedPerDataSource() throws Exception {
    DatabaseClock clock = DatabaseClock.of(db);
    assertThat(DatabaseClock.of(db)).isSameAs(clock);
    clock.read(db);

    Instant before = serverTime();
    Instant told = clock.instant();
    Instant after = serverTime();

    // Between two reads of the server's clock, give or take the read's own half round trip.
    assertThat(told).isBetween(before.minusMillis(50), after.plusMillis(50));
    assertThat(clock.getZone()).isEqualTo(java.time.ZoneOffset.UTC);
  }

  @Test
  void aServerThatCannotBeReadLeavesTheClockCounting() throws Exception {
    PGSimpleDataSource unreachable = new PGSimpleDataSource();
    unreachable.setURL("jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1");
    DatabaseClock clock = DatabaseClock.of(unreachable);
    clock.read(unreachable);

    Instant first = clock.instant();
    Thread.sleep(20);
    Instant second = clock.instant();

    assertThat(Duration.between(first, second)).isGreaterThanOrEqualTo(Duration.ofMillis(20));
    assertThat(Duration.between(Instant.now(), second).abs()).isLessThan(Duration.ofSeconds(5));
  }

  private Instant serverTime() throws Exception {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select clock_timestamp()")) {
      rs.next();
      return rs.getObject(1, OffsetDateTime.class).toInstant();
    }
  }
}
