package dev.idemkit.kafka;

import dev.idemkit.outbox.OutboxSchema;
import dev.idemkit.outbox.support.ModuleSchema;
import javax.sql.DataSource;

/**
 * The Kafka module's schema history ({@code dev/idemkit/kafka/migration}, its own Flyway history
 * table). Its first version kept the per-aggregate sequences and held messages in tables of its
 * own; they live in the inbox now (idemkit-outbox), and version 2 moves what they held there. The
 * inbox's tables come first: {@link #migrate} applies {@link OutboxSchema#migrate} before its own.
 */
public final class KafkaSchema {

  /** Where the schema files are. */
  public static final String LOCATION = "classpath:dev/idemkit/kafka/migration";

  /** The Kafka consumer's Flyway history table. */
  public static final String HISTORY_TABLE = "idemkit_kafka_schema_history";

  private KafkaSchema() {}

  /**
   * Applies the outbox's pending schema files, then this module's; returns how many of these ran.
   */
  public static int migrate(DataSource dataSource) {
    OutboxSchema.migrate(dataSource);
    return ModuleSchema.migrate(dataSource, LOCATION, HISTORY_TABLE);
  }
}
