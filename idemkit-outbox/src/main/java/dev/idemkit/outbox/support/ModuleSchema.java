package dev.idemkit.outbox.support;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * How the outbox and its transport modules apply their tables: Flyway, each module with a history
 * table of its own (beside the record store's and the application's), and a database that already
 * has other tables taken as version 0.
 */
public final class ModuleSchema {

  private ModuleSchema() {}

  /** Applies the pending schema files at {@code location}; returns how many ran. */
  public static int migrate(DataSource dataSource, String location, String historyTable) {
    return Flyway.configure()
        .dataSource(dataSource)
        .locations(location)
        .table(historyTable)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load()
        .migrate()
        .migrationsExecuted;
  }
}
