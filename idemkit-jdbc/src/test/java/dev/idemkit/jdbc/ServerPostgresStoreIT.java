package dev.idemkit.jdbc;

import javax.sql.DataSource;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The store contract on the PostgreSQL server that {@code IDEMKIT_TEST_JDBC_URL} names. */
@EnabledIfEnvironmentVariable(
    named = "IDEMKIT_TEST_JDBC_URL",
    matches = ".+",
    disabledReason =
        "needs a PostgreSQL server: set IDEMKIT_TEST_JDBC_URL (e.g."
            + " jdbc:postgresql://127.0.0.1:5432/test, with IDEMKIT_TEST_JDBC_USER), as .ci/run"
            + " does; the same contract runs on the embedded PostgreSQL without it")
class ServerPostgresStoreIT extends PostgresContract {
  @Override
  protected DataSource dataSource() {
    return TestDatabase.server().dataSource();
  }
}
