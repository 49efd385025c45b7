package dev.idemkit.jdbc;

import java.lang.ref.WeakReference;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * The database server's time, read in this JVM without a round trip: what the outbox, deliveries
 * and inboxes write as due times, marks and cut-offs, so that instances whose own clocks disagree
 * (by minutes, or stepped by NTP while they run) agree on when a row is due, as the record store
 * does with {@code statement_timestamp()} in its statements (docs/failover.md).
 *
 * <p>It reads the server's {@code clock_timestamp()} once in a while ({@link #RESYNC}) and between
 * reads counts forward with this JVM's monotonic clock ({@link System#nanoTime()}), which a step of
 * the machine's wall clock does not move. A read places the server's time at the midpoint of its
 * round trip, so it is off by at most half of that; the monotonic clock drifts by microseconds
 * between reads. Until the first read (and while the database cannot be read) it counts from this
 * machine's wall clock as it was when the clock was made.
 *
 * <p>One clock per {@link DataSource} ({@link #of}), read by one daemon thread for all of them.
 */
public final class DatabaseClock extends Clock {

  /** How often the server's time is read again. */
  public static final Duration RESYNC = Duration.ofSeconds(30);

  /**
   * The clocks made so far, with their data sources held weakly and told apart by identity (a data
   * source's own {@code equals} may do anything): few, so a list.
   */
  private static final List<Made> CLOCKS = new ArrayList<>();

  private record Made(WeakReference<DataSource> source, DatabaseClock clock) {}

  private static final ScheduledExecutorService READER =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "idemkit-database-clock");
            t.setDaemon(true);
            return t;
          });

  /** The server's time at a moment of this JVM's monotonic clock. */
  private record Anchor(Instant at, long nanos) {
    Instant now() {
      return at.plusNanos(System.nanoTime() - nanos);
    }
  }

  private volatile Anchor anchor = new Anchor(Instant.now(), System.nanoTime());

  private DatabaseClock() {}

  /**
   * The clock of {@code dataSource}'s server, shared by everything that asks for it; its first read
   * of the server's time is already under way.
   */
  public static DatabaseClock of(DataSource dataSource) {
    synchronized (CLOCKS) {
      CLOCKS.removeIf(made -> made.source().get() == null);
      for (Made made : CLOCKS) {
        if (made.source().get() == dataSource) {
          return made.clock();
        }
      }
      DatabaseClock clock = new DatabaseClock();
      WeakReference<DataSource> source = new WeakReference<>(dataSource);
      CLOCKS.add(new Made(source, clock));
      // The reads hold the data source weakly: once nothing else uses it, they stop.
      READER.scheduleWithFixedDelay(
          () -> {
            DataSource ds = source.get();
            if (ds == null) {
              throw new IllegalStateException("data source gone: no more reads");
            }
            clock.read(ds);
          },
          0,
          RESYNC.toMillis(),
          TimeUnit.MILLISECONDS);
      return clock;
    }
  }

  /** Reads the server's time; keeps the last reading when the server cannot be read now. */
  void read(DataSource dataSource) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      long before = System.nanoTime();
      s.setQueryTimeout(5);
      try (ResultSet rs = s.executeQuery("select clock_timestamp()")) {
        rs.next();
        Instant server = rs.getObject(1, OffsetDateTime.class).toInstant();
        long after = System.nanoTime();
        anchor = new Anchor(server, before + (after - before) / 2);
      }
    } catch (SQLException | RuntimeException e) {
      // Unreachable for now: count on from the last reading, and read again at the next turn.
    }
  }

  @Override
  public Instant instant() {
    return anchor.now();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    if (zone.equals(ZoneOffset.UTC)) {
      return this;
    }
    throw new UnsupportedOperationException("the database clock is in UTC");
  }
}
