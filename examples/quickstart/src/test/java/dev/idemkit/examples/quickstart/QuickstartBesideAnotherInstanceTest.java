package dev.idemkit.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quickstart started while another process (the payments service, say) runs the embedded
 * PostgreSQL on the same folder: it ends with one line that names the folder and what to do, not a
 * stack trace.
 */
class QuickstartBesideAnotherInstanceTest {

  @Test
  void aFolderInUseEndsTheQuickstartInOneLine(@TempDir Path dataDir) throws Exception {
    try (IdemkitDatabase running = IdemkitDatabase.embedded(dataDir, 2)) {
      ProcessBuilder quickstart =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  QuickstartDemo.class.getName())
              .redirectErrorStream(true);
      quickstart.environment().put("IDEMKIT_DATA_DIR", dataDir.toString());
      quickstart.environment().remove("IDEMKIT_JDBC_URL");
      Process process = quickstart.start();
      assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

      assertThat(process.exitValue()).as(output).isEqualTo(1);
      assertThat(output.lines().toList())
          .as(output)
          .containsExactly(
              "Idemkit quickstart: starting PostgreSQL ...",
              "The embedded database folder "
                  + dataDir
                  + " is in use by another running instance (its PostgreSQL listens on port "
                  + Files.readAllLines(dataDir.resolve("postmaster.pid")).get(3).trim()
                  + "). Run the quickstart on a folder of its own: IDEMKIT_DATA_DIR=<another"
                  + " folder>.");
    }
  }
}
