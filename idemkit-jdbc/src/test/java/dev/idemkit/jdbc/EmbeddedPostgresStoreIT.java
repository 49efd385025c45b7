package dev.idemkit.jdbc;

import javax.sql.DataSource;

/** The store contract on the embedded PostgreSQL (always runs). */
class EmbeddedPostgresStoreIT extends PostgresContract {
  @Override
  protected DataSource dataSource() {
    return TestDatabase.embedded().dataSource();
  }
}
