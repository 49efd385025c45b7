package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded server is not open to other local users: every login takes a password, the
 * application's role is not a superuser, and a directory made before passwords keeps its data and
 * its schema, now the application's.
 */
class EmbeddedLoginIT {

  @Test
  void aFreshDirectoryTakesPasswordsAndTheApplicationIsNoSuperuser(@TempDir Path dataDir)
      throws Exception {
    try (EmbeddedPostgres server = EmbeddedLogin.start(dataDir, 20).server()) {
      EmbeddedLogin login = EmbeddedLogin.ofRunning(dataDir);
      String url = login.jdbcUrl("postgres");
      try (Connection c = DriverManager.getConnection(url, login.user(), login.password());
          Statement s = c.createStatement()) {
        assertThat(superuser(s)).isFalse();
        s.execute("create table t (id int)");
        s.execute("create database idemkit_login_check");
        assertThatThrownBy(() -> s.execute("copy t to program 'true'"))
            .as("no program runs from the application's login")
            .isInstanceOf(SQLException.class);
      }
      assertNoLoginWithoutPassword(url);
    }

    try (EmbeddedPostgres again = EmbeddedLogin.start(dataDir, 20).server()) {
      EmbeddedLogin login = EmbeddedLogin.ofRunning(dataDir);
      try (Connection c =
              DriverManager.getConnection(
                  login.jdbcUrl("postgres"), login.user(), login.password());
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("select count(*) from t")) {
        assertThat(rs.next()).isTrue();
      }
      assertNoLoginWithoutPassword(login.jdbcUrl("postgres"));
    }
  }

  @Test
  void aDirectoryFromBeforePasswordsIsConvertedWithItsData(@TempDir Path dataDir) throws Exception {
    try (EmbeddedPostgres old = IdemkitDatabase.embeddedServer(dataDir, 20).start();
        Connection c = old.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("create table payment (id serial primary key, reference text)");
      s.execute("insert into payment (reference) values ('kept')");
      s.execute("create function one() returns int language sql as 'select 1'");
      s.execute("create database old_provider");
    }

    try (EmbeddedPostgres server = EmbeddedLogin.start(dataDir, 20).server()) {
      EmbeddedLogin login = EmbeddedLogin.ofRunning(dataDir);
      try (Connection c =
              DriverManager.getConnection(
                  login.jdbcUrl("postgres"), login.user(), login.password());
          Statement s = c.createStatement()) {
        assertThat(superuser(s)).isFalse();
        s.execute("insert into payment (reference) values ('new')");
        s.execute("alter table payment add column note text");
        try (ResultSet rs =
            s.executeQuery("select string_agg(reference, ',' order by id), one() from payment")) {
          rs.next();
          assertThat(rs.getString(1)).isEqualTo("kept,new");
        }
      }
      try (Connection c =
              DriverManager.getConnection(
                  login.jdbcUrl("old_provider"), login.user(), login.password());
          Statement s = c.createStatement()) {
        s.execute("create table charge (id int)");
      }
      assertNoLoginWithoutPassword(login.jdbcUrl("postgres"));
    }
  }

  private static boolean superuser(Statement s) throws SQLException {
    try (ResultSet rs =
        s.executeQuery("select rolsuper from pg_roles where rolname = current_user")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  private static void assertNoLoginWithoutPassword(String url) {
    for (String user : new String[] {"postgres", EmbeddedLogin.APP_ROLE}) {
      assertThatThrownBy(() -> DriverManager.getConnection(url, user, null).close())
          .as(user + " without a password")
          .isInstanceOf(SQLException.class);
    }
  }
}
