package dev.idemkit.jdbc;

import java.sql.Connection;
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

  private IdemkitSchema() {}

  /** Applies every pending schema file; returns how many ran. */
  public static int migrate(DataSource dataSource) {
    return flyway(dataSource).migrate().migrationsExecuted;
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
