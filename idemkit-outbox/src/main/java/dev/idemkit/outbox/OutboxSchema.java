package dev.idemkit.outbox;

import dev.idemkit.outbox.support.ModuleSchema;
import javax.sql.DataSource;

/**
 * Creates and upgrades the outbox, inbox and delivery tables with their own versioned SQL files
 * ({@code dev/idemkit/outbox/migration}) and their own Flyway history table, so they live beside
 * the record store's schema and the application's migrations without touching either.
 */
public final class OutboxSchema {

  /** Where the schema files are. */
  public static final String LOCATION = "classpath:dev/idemkit/outbox/migration";

  /** The outbox's Flyway history table. */
  public static final String HISTORY_TABLE = "idemkit_outbox_schema_history";

  private OutboxSchema() {}

  /** Applies every pending schema file; returns how many ran. */
  public static int migrate(DataSource dataSource) {
    return ModuleSchema.migrate(dataSource, LOCATION, HISTORY_TABLE);
  }
}
