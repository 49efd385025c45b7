package dev.idemkit.kafka;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates the Kafka consumer's tables (per-aggregate sequence, held messages) with their own
 * versioned SQL files ({@code dev/idemkit/kafka/migration}) and Flyway history table, beside the
 * outbox's. Apply {@link dev.idemkit.outbox.OutboxSchema#migrate} too: the inbox is the outbox's.
 */
public final class KafkaSchema {

  /** Where the schema files are. */
  public static final String LOCATION = "classpath:dev/idemkit/kafka/migration";

  /** The Kafka consumer's Flyway history table. */
  public static final String HISTORY_TABLE = "idemkit_kafka_schema_history";

  private KafkaSchema() {}

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
