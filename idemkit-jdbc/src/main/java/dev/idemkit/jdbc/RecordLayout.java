package dev.idemkit.jdbc;

/**
 * How the record table {@code idemkit_record} is laid out in the database (docs/scaling.md,
 * "Records at large scale"): one plain table, or hash partitions of its primary key. Chosen when
 * the table is made ({@link IdemkitSchema#migrate(javax.sql.DataSource, RecordLayout)}); the store
 * and its statements are the same for both.
 *
 * @param partitions how many hash partitions; 0 for the plain table
 */
public record RecordLayout(int partitions) {

  /** The most partitions a table may have here. */
  public static final int MAX_PARTITIONS = 1024;

  public RecordLayout {
    if (partitions != 0 && (partitions < 2 || partitions > MAX_PARTITIONS)) {
      throw new IllegalArgumentException(
          "partitions must be between 2 and " + MAX_PARTITIONS + ", not " + partitions);
    }
  }

  /** One table: the layout of every database made before layouts could be chosen. */
  public static RecordLayout plain() {
    return new RecordLayout(0);
  }

  /**
   * {@code partitions} hash partitions of the primary key {@code (tenant, operation, idem_key)},
   * fixed when the table is made.
   *
   * @throws IllegalArgumentException unless {@code partitions} is between 2 and {@link
   *     #MAX_PARTITIONS}
   */
  public static RecordLayout hashPartitioned(int partitions) {
    if (partitions == 0) {
      throw new IllegalArgumentException("a hash-partitioned table needs partitions, not 0");
    }
    return new RecordLayout(partitions);
  }

  public boolean isPartitioned() {
    return partitions > 0;
  }

  @Override
  public String toString() {
    return isPartitioned() ? "hash-partitioned (" + partitions + " partitions)" : "plain";
  }
}
