package dev.idemkit.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A durable record of the operations a client has started and not yet finished, so that a process
 * that crashed or was killed resumes each of them <em>with the same key and the same body</em>
 * after a restart, instead of forgetting them or, worse, sending them again under a new key.
 *
 * <p><strong>The guarantee.</strong> The client appends an operation's {@code START} line and
 * forces it to the disk ({@link FileChannel#force}) <em>before</em> the first attempt leaves the
 * process. Whatever happens after that (a crash, {@code kill -9}, a power cut), {@link #pending()}
 * of the restarted process lists the operation until a final answer was received for it: a {@code
 * 2xx}/{@code 3xx}, or a refusal that retrying cannot change (not a refusal of the credentials,
 * {@code 401}/{@code 403}/{@code 407}, which decided nothing about the operation). Resuming it with
 * {@link IdempotentClient#resume(PendingOperation)} gets the server's stored answer if an earlier
 * attempt was executed, and executes it once if none was. The {@code DONE} line is not forced:
 * losing it costs one harmless replayed request after a crash, not a double execution. An operation
 * whose retries ran out stays pending; that is its purpose.
 *
 * <p><strong>The file.</strong> UTF-8 text, one event per line, appended only:
 *
 * <pre>
 * START &lt;operationId&gt; &lt;key&gt; &lt;method&gt; &lt;path&gt; &lt;base64 body&gt; &lt;base64 headers&gt;
 * DONE &lt;operationId&gt;
 * </pre>
 *
 * <p>An empty body or header block is written as {@code -}; headers are {@code name:value} lines.
 * Credentials are never written: the {@code Authorization} header comes from the client. A last
 * line that is torn (no newline, or unreadable) is the trace of a crash in mid-write and is
 * ignored: its operation had not been sent. Opening the journal rewrites it (to a temporary file,
 * then an atomic rename) with only the pending operations, so it does not grow without bound.
 *
 * <p><strong>One owner.</strong> A journal belongs to one client at a time: opening it takes an
 * exclusive lock on {@code <file>.lock}, which the operating system releases when the process dies,
 * so two live clients can never resume the same operation side by side. Thread-safe.
 */
public final class Journal implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(Journal.class.getName());
  private static final String EMPTY = "-";

  private final Path file;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final FileChannel channel;
  private final Map<String, PendingOperation> pending;
  private boolean closed;

  private Journal(
      Path file,
      FileChannel lockChannel,
      FileLock lock,
      FileChannel channel,
      Map<String, PendingOperation> pending) {
    this.file = file;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.channel = channel;
    this.pending = pending;
  }

  /**
   * Opens the journal in {@code file}, creating it (and its directory) if needed, and reads the
   * operations that were started and not finished.
   *
   * @param file the journal file
   * @return the journal, locked for this process until {@link #close()}
   * @throws IOException if the file cannot be read or written, or a line other than the last is
   *     corrupt
   * @throws IllegalStateException if another client, in this process or another, has the journal
   *     open
   */
  public static Journal open(Path file) throws IOException {
    return open(file, Journal::syncDirectory);
  }

  /** Makes the entries of a directory (a new or renamed file) durable. */
  @FunctionalInterface
  interface DirectorySync {
    void sync(Path directory);
  }

  /** {@link #open(Path)} with the directory sync replaced: a seam for tests. */
  static Journal open(Path file, DirectorySync directorySync) throws IOException {
    Path journal = file.toAbsolutePath().normalize();
    if (journal.getParent() != null) {
      Files.createDirectories(journal.getParent());
    }
    Path lockFile = journal.resolveSibling(journal.getFileName() + ".lock");
    FileChannel lockChannel =
        FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = lockChannel.tryLock();
    } catch (OverlappingFileLockException e) {
      // This JVM already holds it.
      lockChannel.close();
      throw inUse(journal);
    } catch (IOException e) {
      lockChannel.close();
      throw e;
    }
    if (lock == null) {
      lockChannel.close();
      throw inUse(journal);
    }
    try {
      boolean exists = Files.exists(journal);
      byte[] content = exists ? Files.readAllBytes(journal) : new byte[0];
      Parsed parsed = parse(content, journal);
      Map<String, PendingOperation> pending = parsed.pending();
      byte[] compact = serialize(pending.values());
      if (!Arrays.equals(compact, content)) {
        try {
          replace(journal, compact, directorySync);
        } catch (IOException e) {
          // A full disk has no room for the compacted copy. Keep the file as it is, but cut off
          // a torn or unreadable tail (which frees space rather than needing it): a line appended
          // after it would otherwise make it a corrupt middle line, and the next open would fail.
          LOG.log(
              Level.WARNING,
              "could not compact the journal " + journal + " (" + e + "); keeping it as it is");
          if (parsed.readableLength() < content.length) {
            try (FileChannel cut = FileChannel.open(journal, StandardOpenOption.WRITE)) {
              cut.truncate(parsed.readableLength());
              cut.force(true);
            }
          }
        }
      }
      FileChannel channel =
          FileChannel.open(
              journal,
              StandardOpenOption.CREATE,
              StandardOpenOption.WRITE,
              StandardOpenOption.APPEND);
      if (!exists) {
        // The new file's directory entry must be durable too, or a crash can lose the whole file
        // with the START lines forced into it.
        directorySync.sync(journal.getParent());
      }
      return new Journal(journal, lockChannel, lock, channel, pending);
    } catch (IOException | RuntimeException e) {
      lockChannel.close();
      throw e;
    }
  }

  /** The journal file. */
  public Path file() {
    return file;
  }

  /**
   * The operations started and not finished, oldest first: resume each with {@link
   * IdempotentClient#resume(PendingOperation)}, or {@link #discard(String)} it.
   *
   * @return a snapshot
   */
  public synchronized List<PendingOperation> pending() {
    return List.copyOf(pending.values());
  }

  /**
   * Marks an operation finished without sending it again, for an operation the application settled
   * in another way. Its key is forgotten: only do this when the operation's outcome no longer
   * matters.
   *
   * @param operationId the operation's id
   */
  public void discard(String operationId) {
    done(operationId);
  }

  /** Releases the file and its lock. Pending operations stay in the file. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      channel.close();
      lock.release();
      lockChannel.close();
    } catch (IOException e) {
      throw new UncheckedIOException("could not close the journal " + file, e);
    }
  }

  /**
   * Records a new operation and forces it to the disk. Called before the operation's first attempt
   * is sent; if it throws, nothing was sent.
   */
  synchronized void start(PendingOperation operation) {
    requireOpen();
    long before = -1;
    try {
      before = channel.size();
      write(startLine(operation));
      // Data and the file's length, so the line is there after a crash (fdatasync on Linux).
      channel.force(false);
    } catch (IOException e) {
      cutBackTo(before);
      throw new UncheckedIOException(
          "could not write the journal "
              + file
              + "; the operation was not sent. Check the disk and try again.",
          e);
    }
    pending.put(operation.operationId(), operation);
  }

  /**
   * Records that an operation got its final answer. Not forced: a lost {@code DONE} only makes a
   * restarted process replay the operation, which the server answers from its record.
   */
  synchronized void done(String operationId) {
    if (closed || pending.remove(operationId) == null) {
      return;
    }
    try {
      write("DONE " + operationId + "\n");
    } catch (IOException e) {
      LOG.log(
          Level.WARNING,
          "could not mark operation "
              + operationId
              + " done in "
              + file
              + "; after a restart it will be resumed and replayed",
          e);
    }
  }

  synchronized boolean isPending(String operationId) {
    return pending.containsKey(operationId);
  }

  /**
   * Removes what a failed write left (part of a line, e.g. on a full disk), so that the next line
   * does not continue it. If even that fails, the next {@link #open} ignores the torn tail.
   */
  private void cutBackTo(long size) {
    if (size < 0) {
      return;
    }
    try {
      if (channel.size() > size) {
        channel.truncate(size);
      }
    } catch (IOException e) {
      LOG.log(Level.WARNING, "could not remove a partly written line from " + file + ": " + e);
    }
  }

  private void write(String line) throws IOException {
    ByteBuffer bytes = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
    while (bytes.hasRemaining()) {
      channel.write(bytes);
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("the journal " + file + " is closed");
    }
  }

  private static IllegalStateException inUse(Path journal) {
    return new IllegalStateException(
        "the journal "
            + journal
            + " is in use by another client (in this process or another); a journal belongs to"
            + " one client at a time. Close the other client, or give this one its own journal.");
  }

  private static String startLine(PendingOperation op) {
    StringBuilder headers = new StringBuilder();
    op.headers()
        .forEach((name, value) -> headers.append(name).append(':').append(value).append('\n'));
    return "START "
        + op.operationId()
        + ' '
        + op.key()
        + ' '
        + op.method()
        + ' '
        + op.path()
        + ' '
        + encode(op.bodyBytes())
        + ' '
        + encode(headers.toString().getBytes(StandardCharsets.UTF_8))
        + '\n';
  }

  private static byte[] serialize(Iterable<PendingOperation> operations) {
    StringBuilder out = new StringBuilder();
    operations.forEach(op -> out.append(startLine(op)));
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The operations a journal lists, and how many of its bytes are whole, readable lines (the rest
   * is a torn or unreadable last line).
   */
  private record Parsed(Map<String, PendingOperation> pending, long readableLength) {}

  private static Parsed parse(byte[] content, Path journal) throws IOException {
    Map<String, PendingOperation> pending = new LinkedHashMap<>();
    String text = new String(content, StandardCharsets.UTF_8);
    List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
    // After the last newline: empty, or a line torn by a crash in mid-write.
    String tail = lines.remove(lines.size() - 1);
    if (!tail.isEmpty()) {
      LOG.log(
          Level.INFO, "ignoring the torn last line of " + journal + " (written during a crash)");
    }
    long readable = 0;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      try {
        apply(line, pending);
        readable += line.getBytes(StandardCharsets.UTF_8).length + 1;
      } catch (RuntimeException e) {
        if (i == lines.size() - 1) {
          LOG.log(Level.INFO, "ignoring the unreadable last line of " + journal + ": " + e);
          break;
        }
        throw new IOException(
            "the journal "
                + journal
                + " is corrupt at line "
                + (i + 1)
                + " ("
                + e.getMessage()
                + "); move it aside to start afresh, after settling the operations it lists",
            e);
      }
    }
    return new Parsed(pending, readable);
  }

  private static void apply(String line, Map<String, PendingOperation> pending) {
    String[] f = line.split(" ", -1);
    if (f[0].equals("START") && f.length == 7) {
      Map<String, String> headers = new LinkedHashMap<>();
      for (String h : new String(decode(f[6]), StandardCharsets.UTF_8).split("\n")) {
        if (h.isEmpty()) {
          continue;
        }
        int colon = h.indexOf(':');
        if (colon <= 0) {
          throw new IllegalArgumentException("bad header '" + h + "'");
        }
        headers.put(h.substring(0, colon), h.substring(colon + 1));
      }
      if (f[1].isEmpty() || f[3].isEmpty() || !f[4].startsWith("/")) {
        throw new IllegalArgumentException("bad START line");
      }
      pending.put(f[1], new PendingOperation(f[1], f[2], f[3], f[4], decode(f[5]), headers));
    } else if (f[0].equals("DONE") && f.length == 2) {
      pending.remove(f[1]);
    } else {
      throw new IllegalArgumentException("not a START or DONE line");
    }
  }

  private static String encode(byte[] bytes) {
    return bytes.length == 0 ? EMPTY : Base64.getEncoder().encodeToString(bytes);
  }

  private static byte[] decode(String field) {
    return field.equals(EMPTY) ? new byte[0] : Base64.getDecoder().decode(field);
  }

  /** Replaces the file's content crash-safely: a full temporary file, then an atomic rename. */
  private static void replace(Path journal, byte[] content, DirectorySync directorySync)
      throws IOException {
    Path temp = journal.resolveSibling(journal.getFileName() + ".tmp");
    try {
      writeFully(temp, content);
    } catch (IOException e) {
      try {
        Files.deleteIfExists(temp);
      } catch (IOException ignored) {
        // What it occupies goes with the next successful compaction.
      }
      throw e;
    }
    Files.move(temp, journal, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    // Make the rename itself durable.
    directorySync.sync(journal.getParent());
  }

  private static void syncDirectory(Path dir) {
    if (dir == null) {
      return;
    }
    // Directories cannot be opened for this on every platform.
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      LOG.log(Level.DEBUG, "could not sync directory " + dir + ": " + e);
    }
  }

  private static void writeFully(Path temp, byte[] content) throws IOException {
    try (FileChannel out =
        FileChannel.open(
            temp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer bytes = ByteBuffer.wrap(content);
      while (bytes.hasRemaining()) {
        out.write(bytes);
      }
      out.force(true);
    }
  }
}
