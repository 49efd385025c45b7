package dev.idemkit.jdbc;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Stops an embedded PostgreSQL that a crashed process left running on a data directory.
 *
 * <p>The embedded server runs as a process of its own: when the application that started it is
 * killed ({@code kill -9}, out of memory), nothing stops it, and it keeps holding the data
 * directory ({@code postmaster.pid}). The next start on that directory would then fail after
 * waiting for a server that cannot start. Before a start, this finds such an orphan and shuts it
 * down cleanly.
 *
 * <p>What makes a server an orphan of this directory, all of: no live process holds the embedded
 * library's lock on the directory ({@code epg-lock}, held for as long as the server's owner lives,
 * released by the operating system when it dies); {@code postmaster.pid} names this directory and a
 * live process; and that process is a {@code postgres} started on this directory. A server of a
 * live owner, another directory's server, or an unrelated process that reuses the pid is left
 * alone.
 */
final class OrphanedServer {

  private static final System.Logger LOG = System.getLogger(OrphanedServer.class.getName());

  /** The embedded library's lock file in the data directory. */
  static final String OWNER_LOCK = "epg-lock";

  private static final long SHUTDOWN_SECONDS = 60;

  private OrphanedServer() {}

  /**
   * Shuts down the server a dead process left on {@code dataDir}, if any.
   *
   * @return whether one was stopped
   */
  static boolean stopIfAny(Path dataDir) throws IOException {
    Path dir = dataDir.toAbsolutePath().normalize();
    Path pidFile = dir.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) {
      return false;
    }
    try (FileChannel channel =
        FileChannel.open(
            dir.resolve(OWNER_LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      FileLock ownerLock;
      try {
        ownerLock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        return false; // this JVM runs the server
      }
      if (ownerLock == null) {
        return false; // another live process runs it
      }
      try {
        Optional<ProcessHandle> orphan = orphanOf(dir, pidFile);
        if (orphan.isEmpty()) {
          return false;
        }
        stop(orphan.get(), dir, pidFile);
        return true;
      } finally {
        ownerLock.release();
      }
    }
  }

  private static Optional<ProcessHandle> orphanOf(Path dir, Path pidFile) throws IOException {
    List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
    if (lines.size() < 2) {
      return Optional.empty();
    }
    long pid;
    try {
      pid = Long.parseLong(lines.get(0).trim());
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
    if (!sameDirectory(Path.of(lines.get(1).trim()), dir)) {
      return Optional.empty();
    }
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(p -> isPostgresOn(p, dir));
  }

  /** A {@code postgres} whose command line names {@code dir} as its data directory. */
  private static boolean isPostgresOn(ProcessHandle process, Path dir) {
    ProcessHandle.Info info = process.info();
    Optional<String> command = info.command();
    if (command.isEmpty()) {
      return false;
    }
    String name = Path.of(command.get()).getFileName().toString();
    if (!name.equals("postgres") && !name.equals("postgres.exe")) {
      return false;
    }
    return info.arguments()
        .map(args -> Arrays.stream(args).anyMatch(a -> isPath(a) && sameDirectory(Path.of(a), dir)))
        .orElse(true);
  }

  private static boolean isPath(String argument) {
    return !argument.isEmpty() && !argument.startsWith("-");
  }

  private static boolean sameDirectory(Path a, Path b) {
    try {
      return Files.isSameFile(a, b);
    } catch (IOException | RuntimeException e) {
      return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
    }
  }

  /**
   * Fast shutdown (SIGINT): PostgreSQL ends its sessions, writes a checkpoint and removes its pid
   * file, so the next start needs no crash recovery. SIGTERM, where SIGINT cannot be sent, waits
   * for sessions, of which an orphan has none (they died with their process).
   */
  private static void stop(ProcessHandle postgres, Path dir, Path pidFile) throws IOException {
    LOG.log(
        System.Logger.Level.WARNING,
        "Stopping the embedded PostgreSQL (pid "
            + postgres.pid()
            + ") left running on "
            + dir
            + " by a process that ended without stopping it");
    if (!interrupt(postgres)) {
      postgres.destroy();
    }
    try {
      postgres.onExit().get(SHUTDOWN_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new IOException(
          "The embedded PostgreSQL (pid "
              + postgres.pid()
              + ") left running on "
              + dir
              + " did not stop in "
              + SHUTDOWN_SECONDS
              + " s; stop it, then start again",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while stopping the orphaned PostgreSQL", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IOException(e.getCause());
    }
    if (Files.exists(pidFile)) {
      LOG.log(System.Logger.Level.INFO, "The orphaned PostgreSQL left " + pidFile + " behind");
    }
  }

  private static boolean interrupt(ProcessHandle postgres) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-INT", String.valueOf(postgres.pid()))
              .redirectErrorStream(true)
              .start();
      return kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
