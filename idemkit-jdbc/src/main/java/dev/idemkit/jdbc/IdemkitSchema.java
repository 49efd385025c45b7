package dev.idemkit.jdbc;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

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
    return Flyway.configure()
        .dataSource(dataSource)
        .locations(LOCATION)
        .table(HISTORY_TABLE)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load()
        .migrate()
        .migrationsExecuted;
  }
}
