package dev.idemkit.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.jdbc.IdemkitDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quickstart, run as a user runs it (its own JVM), when its embedded PostgreSQL cannot start:
 * it ends with one line that says why and what to do, not a stack trace.
 */
class QuickstartStartFailuresTest {

  @TempDir Path dataDir;

  /** Another process (the payments service, say) runs the embedded PostgreSQL on the folder. */
  @Test
  void aFolderInUseEndsTheQuickstartInOneLine() throws Exception {
    try (IdemkitDatabase running = IdemkitDatabase.embedded(dataDir, 2)) {
      Finished quickstart = runQuickstart();

      assertThat(quickstart.exitCode()).as(quickstart.output()).isEqualTo(1);
      assertThat(quickstart.output().lines().toList())
          .as(quickstart.output())
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

  /** A platform the jar has no PostgreSQL for (here: this machine, reporting Linux on ARM64). */
  @Test
  void aPlatformWithoutEmbeddedBinariesEndsTheQuickstartInOneLine() throws Exception {
    Finished quickstart = runQuickstart("-Dos.arch=aarch64");

    assertThat(quickstart.exitCode()).as(quickstart.output()).isEqualTo(1);
    List<String> lines = quickstart.output().lines().toList();
    assertThat(lines.get(lines.size() - 1))
        .isEqualTo(
            "No embedded PostgreSQL binaries for this platform ("
                + System.getProperty("os.name")
                + " aarch64) are on the class path. Run the quickstart on a PostgreSQL of your"
                + " own: IDEMKIT_JDBC_URL=jdbc:postgresql://<host>:5432/<database> with"
                + " IDEMKIT_JDBC_USER and IDEMKIT_JDBC_PASSWORD (docs/platforms.md).");
    assertThat(quickstart.output()).doesNotContain("\tat ");
  }

  private record Finished(int exitCode, String output) {}

  private Finished runQuickstart(String... jvmOptions) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of(jvmOptions));
    command.addAll(
        List.of("-cp", System.getProperty("java.class.path"), QuickstartDemo.class.getName()));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("IDEMKIT_DATA_DIR", dataDir.toString());
    builder.environment().remove("IDEMKIT_JDBC_URL");
    Process process = builder.start();
    assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
    return new Finished(
        process.exitValue(),
        new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }
}
