package dev.idemkit.jdbc;

import java.util.Locale;

/**
 * The class path holds no embedded PostgreSQL binaries for this platform (the embedded library
 * found none for its operating system and architecture, e.g. Linux on ARM64). Its message is one
 * sentence naming the platform; the application says what to do instead (use a PostgreSQL of one's
 * own), as only it knows its settings.
 */
public final class NoEmbeddedPostgresException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /** For {@code platform}, e.g. {@code Linux aarch64}. */
  public NoEmbeddedPostgresException(String platform, Throwable cause) {
    super(
        "No embedded PostgreSQL binaries for this platform ("
            + platform
            + ") are on the class path.",
        cause);
  }

  /**
   * {@code failure} as this exception when the embedded library found no binaries for this
   * platform, else {@code failure} unchanged.
   */
  static RuntimeException ifMissing(RuntimeException failure) {
    return failure instanceof IllegalStateException
            && "Missing embedded postgres binaries".equals(failure.getMessage())
        ? new NoEmbeddedPostgresException(
            System.getProperty("os.name")
                + " "
                + System.getProperty("os.arch").toLowerCase(Locale.ROOT),
            failure)
        : failure;
  }
}
