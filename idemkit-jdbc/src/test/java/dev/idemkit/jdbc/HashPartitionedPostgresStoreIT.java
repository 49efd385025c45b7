package dev.idemkit.jdbc;

import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole store contract on the hash-partitioned record table (16 partitions), in a schema of its
 * own on the embedded PostgreSQL.
 */
class HashPartitionedPostgresStoreIT extends PostgresContract {

  private static IdemkitDatabase db;

  @AfterAll
  static synchronized void close() {
    if (db != null) {
      db.close();
      db = null;
    }
  }

  @Override
  protected DataSource dataSource() {
    synchronized (HashPartitionedPostgresStoreIT.class) {
      if (db == null) {
        db = TestDatabase.freshSchema(TestDatabase.POOL_SIZE, RecordLayout.hashPartitioned(16));
      }
      return db.dataSource();
    }
  }
}
