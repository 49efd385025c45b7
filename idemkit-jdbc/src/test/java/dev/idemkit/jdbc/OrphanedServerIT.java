package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} of the process that owns the embedded server leaves the server running, holding
 * the data directory; the next start on that directory must work the first time, with the data.
 */
class OrphanedServerIT {

  @TempDir Path dir;

  @Test
  void aRestartAfterTheOwnerWasKilledStartsTheFirstTime() throws Exception {
    Path data = dir.resolve("pg");
    Process owner =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                EmbeddedServerOwnerMain.class.getName(),
                data.toString(),
                "written before the crash")
            .redirectErrorStream(true)
            .start();
    long orphanPid;
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      String line;
      while ((line = out.readLine()) != null && !line.equals("READY")) {
        seen.append(line).append('\n');
      }
      assertThat(line).as("the owner started its server:\n%s", seen).isEqualTo("READY");
      orphanPid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
    } finally {
      owner.destroyForcibly(); // SIGKILL: no shutdown hook runs
      assertThat(owner.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    Optional<ProcessHandle> orphan = ProcessHandle.of(orphanPid);
    try {
      assertThat(orphan.map(ProcessHandle::isAlive))
          .as("the server outlived its owner")
          .hasValue(true);

      try (IdemkitDatabase restarted = IdemkitDatabase.embedded(data, 2);
          Connection c = restarted.dataSource().getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("select note from survived")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("written before the crash");
        assertThat(orphan.get().isAlive()).as("the orphan was stopped").isFalse();
      }
    } finally {
      orphan.filter(ProcessHandle::isAlive).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  @Test
  void aServerWithALiveOwnerIsLeftAlone() throws Exception {
    Path data = dir.resolve("live");
    try (IdemkitDatabase live = IdemkitDatabase.embedded(data, 2)) {
      assertThat(OrphanedServer.stopIfAny(data)).isFalse();
      try (Connection c = live.dataSource().getConnection()) {
        assertThat(c.isValid(5)).isTrue();
      }
    }
  }
}
