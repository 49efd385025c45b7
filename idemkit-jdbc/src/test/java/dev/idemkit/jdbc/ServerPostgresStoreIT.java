package dev.idemkit.jdbc;

import javax.sql.DataSource;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The store contract on the PostgreSQL server that {@code IDEMKIT_TEST_JDBC_URL} names. */
@EnabledIfEnvironmentVariable(named = "IDEMKIT_TEST_JDBC_URL", matches = ".+")
class ServerPostgresStoreIT extends PostgresContract {
  @Override
  protected DataSource dataSource() {
    return TestDatabase.server().dataSource();
  }
}
