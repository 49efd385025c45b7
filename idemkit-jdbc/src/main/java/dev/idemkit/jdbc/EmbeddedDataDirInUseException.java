package dev.idemkit.jdbc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The embedded PostgreSQL's data folder is in use by another running process (the embedded
 * library's lock file in it, {@code epg-lock}, is held by a live process). Its message is one
 * sentence naming the folder and the running server's port; what to do depends on the application
 * (share that server, or use another folder), so the application says it.
 */
public final class EmbeddedDataDirInUseException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final transient Path dataDir;

  EmbeddedDataDirInUseException(Path dataDir, Throwable cause) {
    super(message(dataDir), cause);
    this.dataDir = dataDir;
  }

  /** The folder in use. */
  public Path dataDir() {
    return dataDir;
  }

  /**
   * {@code failure} as this exception when it says the embedded server's lock is held by another
   * process, else {@code failure} unchanged.
   */
  static RuntimeException ifLockHeld(Path dataDir, RuntimeException failure) {
    String message = String.valueOf(failure.getMessage());
    return failure instanceof IllegalStateException && message.startsWith("could not lock")
        ? new EmbeddedDataDirInUseException(dataDir, failure)
        : failure;
  }

  private static String message(Path dataDir) {
    return "The embedded database folder "
        + dataDir
        + " is in use by another running instance"
        + runningPort(dataDir).map(p -> " (its PostgreSQL listens on port " + p + ")").orElse("")
        + ".";
  }

  /** The running server's port, from line 4 of its {@code postmaster.pid}. */
  private static Optional<String> runningPort(Path dataDir) {
    try {
      List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"));
      return lines.size() > 3 && lines.get(3).trim().matches("[0-9]{1,5}")
          ? Optional.of(lines.get(3).trim())
          : Optional.empty();
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
