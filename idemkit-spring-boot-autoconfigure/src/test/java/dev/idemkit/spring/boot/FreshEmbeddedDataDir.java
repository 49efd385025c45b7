package dev.idemkit.spring.boot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

/** Gives the embedded PostgreSQL of the next test context a fresh data directory of its own. */
final class FreshEmbeddedDataDir {

  private FreshEmbeddedDataDir() {}

  /**
   * Sets {@code idemkit.embedded.data-dir} to a new temporary directory named from {@code prefix}.
   */
  static void use(String prefix) {
    try {
      System.setProperty(
          "idemkit.embedded.data-dir",
          Files.createTempDirectory(prefix).toAbsolutePath().toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
