package dev.idemkit.spring.boot;

import java.sql.SQLException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.Environment;

/**
 * Start-up failed because the application could not connect to its database: the server cannot be
 * reached ({@link DatabaseUnreachable}), refused the login (SQLState class {@code 28}), or has no
 * database of that name ({@code 3D000}). Spring Boot prints the database's URL and the driver's
 * reason instead of a stack trace through the migrations and the bean factory.
 */
class DatabaseConnectionFailureAnalyzer implements FailureAnalyzer {

  private final Environment environment;

  /** Spring Boot passes the application's environment (null if it failed before one existed). */
  DatabaseConnectionFailureAnalyzer(Environment environment) {
    this.environment = environment;
  }

  @Override
  public FailureAnalysis analyze(Throwable failure) {
    SQLException cause = connectionFailureIn(failure);
    if (cause == null) {
      return null;
    }
    String url = environment == null ? null : environment.getProperty("spring.datasource.url");
    return new FailureAnalysis(
        "Could not connect to the database"
            + (url == null ? "" : " at " + url)
            + ": "
            + cause.getMessage()
            + rootReason(cause),
        "Check that PostgreSQL runs there and accepts this login, or point"
            + " spring.datasource.url (with spring.datasource.username and"
            + " spring.datasource.password) at one that does.",
        failure);
  }

  /**
   * The innermost SQLException in {@code failure}'s causes that says the connection failed: the
   * driver's own, whose message names the host and port, rather than a pool's that wraps it.
   */
  private static SQLException connectionFailureIn(Throwable failure) {
    SQLException found = null;
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLException e && (refusedLogin(e) || DatabaseUnreachable.isCauseOf(e))) {
        found = e;
      }
    }
    return found;
  }

  private static boolean refusedLogin(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("28") || state.equals("3D000"));
  }

  /** The network's reason under the driver's message (unknown host, timed out), if any. */
  private static String rootReason(SQLException cause) {
    Throwable root = cause;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == cause || root.getMessage() == null ? "" : " (" + root.getMessage() + ")";
  }
}
