package dev.idemkit.spring.boot;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;

/**
 * Tells a database that cannot be reached from other failures: the connection was lost or refused
 * (SQLState class {@code 08}), the server is shutting down or starting ({@code 57P01} admin
 * shutdown, e.g. {@code pg_terminate_backend}; {@code 57P02} crash shutdown; {@code 57P03} cannot
 * connect now, e.g. during a failover), it has no connection to spare ({@code 53300}), or the pool
 * could not hand out a connection in time. Such a failure says nothing about the request: the same
 * request succeeds once the database is back, so it is answered 503 with {@code Retry-After}.
 */
final class DatabaseUnreachable {

  private static final Set<String> STATES = Set.of("57P01", "57P02", "57P03", "53300");

  private DatabaseUnreachable() {}

  /** Whether {@code failure}, or any of its causes, says the database cannot be reached. */
  static boolean isCauseOf(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLTransientConnectionException
          || t instanceof SQLNonTransientConnectionException
          || t instanceof SQLRecoverableException) {
        return true;
      }
      if (t instanceof SQLException e && e.getSQLState() != null) {
        String state = e.getSQLState();
        if (state.startsWith("08") || STATES.contains(state)) {
          return true;
        }
      }
    }
    return false;
  }
}
