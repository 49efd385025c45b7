package dev.idemkit.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;

/**
 * Creates and upgrades Idemkit's tables with its own versioned SQL files ({@code
 * dev/idemkit/jdbc/migration}) and its own history table, so it lives beside an application's
 * migrations without touching them.
 */
public final class IdemkitSchema {

  /** Where the schema files are. */
  public static final String LOCATION = "classpath:dev/idemkit/jdbc/migration";

  /** Idemkit's Flyway history table. */
  public static final String HISTORY_TABLE = "idemkit_schema_history";

  /** Is the record table partitioned, and into how many partitions. */
  private static final String LAYOUT =
      """
      select c.relkind = 'p' as partitioned,
          (select count(*) from pg_inherits i where i.inhparent = c.oid) as partitions
      from pg_class c
      where c.oid = to_regclass('idemkit_record')
      """;

  /** Partitions an empty plain record table (V19's function). */
  private static final String PARTITION_RECORDS = "select idemkit_partition_records(?)";

  private IdemkitSchema() {}

  /** Applies every pending schema file; returns how many ran. The record table keeps its layout. */
  public static int migrate(DataSource dataSource) {
    return flyway(dataSource).migrate().migrationsExecuted;
  }

  /**
   * Applies every pending schema file and makes the record table of a new database (none yet, or an
   * empty one) in {@code layout}; returns how many schema files ran. An existing table with rows
   * keeps its layout: converting it is a copy (docs/scaling.md, "Records at large scale").
   *
   * @throws IllegalStateException if the record table has rows and another layout
   */
  public static int migrate(DataSource dataSource, RecordLayout layout) {
    int applied = migrate(dataSource);
    RecordLayout actual = layout(dataSource);
    if (actual.equals(layout)) {
      return applied;
    }
    if (layout.isPartitioned() && !actual.isPartitioned()) {
      try (Connection c = dataSource.getConnection();
          PreparedStatement ps = c.prepareStatement(PARTITION_RECORDS)) {
        ps.setInt(1, layout.partitions());
        ps.execute();
        return applied;
      } catch (SQLException e) {
        if (!"IK002".equals(e.getSQLState())) {
          throw new IllegalStateException(
              "Could not partition idemkit_record: " + e.getMessage(), e);
        }
      }
    }
    throw mismatch(layout, actual);
  }

  /**
   * Like {@link #requireCurrent(DataSource)}, and fails unless the record table has {@code layout}.
   *
   * @throws IllegalStateException if the schema is missing or behind, or the table laid out
   *     otherwise
   */
  public static void requireCurrent(DataSource dataSource, RecordLayout layout) {
    requireCurrent(dataSource);
    RecordLayout actual = layout(dataSource);
    if (!actual.equals(layout)) {
      throw mismatch(layout, actual);
    }
  }

  /** The layout of the record table in this database. */
  public static RecordLayout layout(DataSource dataSource) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(LAYOUT)) {
      if (!rs.next()) {
        throw new IllegalStateException("Idemkit's tables are not in this database");
      }
      return rs.getBoolean("partitioned")
          ? RecordLayout.hashPartitioned(rs.getInt("partitions"))
          : RecordLayout.plain();
    } catch (SQLException e) {
      throw new IllegalStateException("Could not read Idemkit's schema: " + e.getMessage(), e);
    }
  }

  private static IllegalStateException mismatch(RecordLayout wanted, RecordLayout actual) {
    return new IllegalStateException(
        "idemkit_record is "
            + actual
            + " in this database, not "
            + wanted
            + " as configured (idemkit.store.layout, idemkit.store.partitions). A table keeps the"
            + " layout it was made with; docs/scaling.md (\"Records at large scale\") says what"
            + " converting one takes. Configure its layout to start with this database.");
  }

  /**
   * Fails, saying what to do, unless the schema is there and up to date: for an application that
   * applies the schema itself (no {@link #migrate} at start-up), so that a missing or older schema
   * stops the start instead of failing every request. With Idemkit's history table, every schema
   * file must have been applied; without it (the files applied by other means), the record table
   * must exist.
   *
   * @throws IllegalStateException if the schema is missing or behind
   */
  public static void requireCurrent(DataSource dataSource) {
    MigrationInfoService info = flyway(dataSource).info();
    MigrationInfo[] applied = info.applied();
    MigrationInfo[] pending = info.pending();
    if (applied.length > 0 && pending.length > 0) {
      throw new IllegalStateException(
          "Idemkit's schema in this database is behind: "
              + Arrays.stream(pending)
                  .map(m -> "V" + m.getVersion() + " " + m.getDescription())
                  .collect(Collectors.joining(", "))
              + " not applied. Apply them (IdemkitSchema.migrate(dataSource), or the files under "
              + LOCATION
              + ") or let the application do it (idemkit.migrate-schema=true).");
    }
    if (applied.length == 0 && !recordTableExists(dataSource)) {
      throw new IllegalStateException(
          "Idemkit's tables are not in this database (no idemkit_record). Apply the schema"
              + " (IdemkitSchema.migrate(dataSource), or the files under "
              + LOCATION
              + ") or let the application do it (idemkit.migrate-schema=true).");
    }
  }

  private static boolean recordTableExists(DataSource dataSource) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select to_regclass('idemkit_record') is not null")) {
      rs.next();
      return rs.getBoolean(1);
    } catch (SQLException e) {
      throw new IllegalStateException("Could not check Idemkit's schema: " + e.getMessage(), e);
    }
  }

  private static Flyway flyway(DataSource dataSource) {
    return Flyway.configure()
        .dataSource(dataSource)
        .locations(LOCATION)
        .table(HISTORY_TABLE)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load();
  }
}
