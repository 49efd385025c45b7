package dev.idemkit.jdbc;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;

/**
 * How the application logs in to the embedded PostgreSQL that keeps its data in a directory: a role
 * that is not a superuser ({@value #APP_ROLE}, owner of the application's databases, allowed to
 * create more), with a password. Every connection authenticates with a password ({@code
 * scram-sha-256}, TCP and Unix socket alike): no local user can connect without one, and the
 * superuser's and the application's passwords are generated at the first start and kept in files of
 * the data directory that only its owner can read ({@value #SUPERUSER_PASSWORD_FILE}, {@value
 * #APP_PASSWORD_FILE}; PostgreSQL keeps the directory itself owner-only).
 *
 * <p>A data directory made before passwords existed (every local user could log in as the
 * superuser) is converted at its next start: one start as it was, to set the passwords and hand the
 * databases and their objects to the application's role, then the protected start.
 *
 * @param port the server's port on localhost
 * @param user the application's role
 * @param password its password
 */
public record EmbeddedLogin(int port, String user, String password) {

  /** The application's role. */
  public static final String APP_ROLE = "idemkit";

  /** The superuser's password, in the data directory. */
  public static final String SUPERUSER_PASSWORD_FILE = "idemkit-superuser.password";

  /** The application role's password, in the data directory. */
  public static final String APP_PASSWORD_FILE = "idemkit-app.password";

  private static final String SUPERUSER = "postgres";
  private static final String HBA =
      """
      # Written by Idemkit at every start: every connection authenticates with a password. The
      # passwords are in idemkit-*.password in this directory, readable only by its owner.
      local all all scram-sha-256
      host all all 127.0.0.1/32 scram-sha-256
      host all all ::1/128 scram-sha-256
      """;

  /** The JDBC URL of {@code database} on this server. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://localhost:" + port + "/" + database;
  }

  /** A started server and the application's login to it. */
  public record Started(EmbeddedPostgres server, EmbeddedLogin login) {}

  /**
   * Starts (or restarts) the embedded server on {@code dataDir} with passwords required, as the
   * builder from {@link IdemkitDatabase#embeddedServer} configures it otherwise.
   *
   * @throws EmbeddedDataDirInUseException if another live process runs a server on {@code dataDir}
   * @throws NoEmbeddedPostgresException if the class path has no binaries for this platform
   */
  public static Started start(Path dataDir, int maxConnections) throws IOException {
    Path superFile = dataDir.resolve(SUPERUSER_PASSWORD_FILE);
    boolean fresh = !Files.exists(dataDir.resolve("postgresql.conf"));
    Path pwfile = null;
    String superPassword;
    if (fresh) {
      superPassword = newPassword();
      pwfile = Files.createTempFile("idemkit-initdb", ".pw", ownerOnly());
      Files.writeString(pwfile, superPassword + "\n", StandardCharsets.UTF_8);
    } else if (Files.exists(superFile)) {
      superPassword = read(superFile);
    } else {
      superPassword = convertUnprotected(dataDir, maxConnections);
    }
    String secret = superPassword;
    EmbeddedPostgres.Builder builder =
        IdemkitDatabase.embeddedServer(dataDir, maxConnections)
            .setConnectConfig("password", superPassword)
            .setDataDirectoryCustomizer(
                dir -> {
                  try {
                    if (!Files.exists(superFile)) {
                      write(superFile, secret);
                    }
                    Files.writeString(dir.toPath().resolve("pg_hba.conf"), HBA);
                  } catch (IOException e) {
                    throw new UncheckedIOException(e);
                  }
                });
    if (pwfile != null) {
      builder.setLocaleConfig("pwfile", pwfile.toString());
    }
    EmbeddedPostgres server;
    try {
      server = builder.start();
    } catch (RuntimeException e) {
      throw NoEmbeddedPostgresException.ifMissing(
          EmbeddedDataDirInUseException.ifLockHeld(dataDir, e));
    } finally {
      if (pwfile != null) {
        Files.deleteIfExists(pwfile);
      }
    }
    try {
      return new Started(server, appLogin(server, dataDir, superPassword));
    } catch (SQLException | IOException | RuntimeException e) {
      server.close();
      throw new IllegalStateException(
          "Could not set up the application's login to the embedded PostgreSQL in "
              + dataDir
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * The application's login to the server another process runs on {@code dataDir}: its port (from
   * {@code postmaster.pid}) and the application's password.
   *
   * @throws IllegalStateException if no server runs there, or the directory has no password
   */
  public static EmbeddedLogin ofRunning(Path dataDir) {
    List<String> pid;
    try {
      pid = Files.readAllLines(dataDir.resolve("postmaster.pid"));
    } catch (IOException e) {
      throw new IllegalStateException(
          "No embedded PostgreSQL is running on " + dataDir + " to join (no postmaster.pid).", e);
    }
    if (pid.size() < 4 || !pid.get(3).trim().matches("[0-9]{1,5}")) {
      throw new IllegalStateException(
          "The embedded PostgreSQL on " + dataDir + " has not finished starting; try again.");
    }
    Path appFile = dataDir.resolve(APP_PASSWORD_FILE);
    if (!Files.exists(appFile)) {
      throw new IllegalStateException(
          "The embedded PostgreSQL on "
              + dataDir
              + " has no "
              + APP_PASSWORD_FILE
              + " (it was started by an older version); restart that instance first.");
    }
    try {
      return new EmbeddedLogin(Integer.parseInt(pid.get(3).trim()), APP_ROLE, read(appFile));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The application's role, created (with its databases and their objects handed over) on the first
   * start that has none; its password is the one in the data directory.
   */
  private static EmbeddedLogin appLogin(EmbeddedPostgres server, Path dataDir, String superPassword)
      throws SQLException, IOException {
    Path appFile = dataDir.resolve(APP_PASSWORD_FILE);
    if (!Files.exists(appFile)) {
      write(appFile, newPassword());
    }
    String appPassword = read(appFile);
    try (Connection c = superuser(server.getPort(), "postgres", superPassword);
        Statement s = c.createStatement()) {
      boolean created;
      try (PreparedStatement exists =
          c.prepareStatement("select count(*) from pg_roles where rolname = ?")) {
        exists.setString(1, APP_ROLE);
        try (ResultSet rs = exists.executeQuery()) {
          rs.next();
          created = rs.getLong(1) == 0;
        }
      }
      if (created) {
        s.execute("create role " + APP_ROLE + " login createdb nosuperuser");
      }
      s.execute(
          "alter role "
              + APP_ROLE
              + " with login createdb nosuperuser password "
              + literal(appPassword));
      if (created) {
        List<String> databases = new ArrayList<>();
        try (ResultSet rs =
            s.executeQuery("select datname from pg_database where not datistemplate")) {
          while (rs.next()) {
            databases.add(rs.getString(1));
          }
        }
        for (String database : databases) {
          s.execute(
              "alter database \"" + database.replace("\"", "\"\"") + "\" owner to " + APP_ROLE);
          try (Connection d = superuser(server.getPort(), database, superPassword);
              Statement ds = d.createStatement()) {
            ds.execute(HAND_OVER);
          }
        }
      }
    }
    return new EmbeddedLogin(server.getPort(), APP_ROLE, appPassword);
  }

  /**
   * Gives the application's role every schema, table, sequence, view, function and type the
   * superuser owns in the current database (not those of the system or of an extension), so that a
   * directory converted from an older version keeps working and migrating under the new role.
   */
  private static final String HAND_OVER =
      """
      do $$
      declare r record;
      begin
        for r in select n.nspname from pg_namespace n
                 where n.nspowner = 'postgres'::regrole
                   and n.nspname not in ('pg_catalog', 'information_schema')
                   and n.nspname not like 'pg\\_%'
        loop
          execute format('alter schema %I owner to idemkit', r.nspname);
        end loop;
        for r in select c.oid::regclass::text as name, c.relkind from pg_class c
                 join pg_namespace n on n.oid = c.relnamespace
                 where c.relowner = 'postgres'::regrole
                   and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
                   and n.nspname not in ('pg_catalog', 'information_schema')
                   and n.nspname not like 'pg\\_%'
                   and not exists (select 1 from pg_depend d
                                   where d.classid = 'pg_class'::regclass and d.objid = c.oid
                                     and d.deptype in ('a', 'i', 'e'))
        loop
          execute format('alter %s %s owner to idemkit',
            case r.relkind when 'S' then 'sequence' when 'v' then 'view'
              when 'm' then 'materialized view' when 'f' then 'foreign table' else 'table' end,
            r.name);
        end loop;
        for r in select p.oid::regprocedure::text as sig, p.prokind from pg_proc p
                 join pg_namespace n on n.oid = p.pronamespace
                 where p.proowner = 'postgres'::regrole
                   and n.nspname not in ('pg_catalog', 'information_schema')
                   and not exists (select 1 from pg_depend d
                                   where d.classid = 'pg_proc'::regclass and d.objid = p.oid
                                     and d.deptype = 'e')
        loop
          execute format('alter %s %s owner to idemkit',
            case r.prokind when 'p' then 'procedure' when 'a' then 'aggregate' else 'function' end,
            r.sig);
        end loop;
        for r in select t.oid::regtype::text as name, t.typtype from pg_type t
                 join pg_namespace n on n.oid = t.typnamespace
                 where t.typowner = 'postgres'::regrole
                   and t.typtype in ('e', 'd', 'r')
                   and n.nspname not in ('pg_catalog', 'information_schema')
                   and not exists (select 1 from pg_depend d
                                   where d.classid = 'pg_type'::regclass and d.objid = t.oid
                                     and d.deptype = 'e')
        loop
          execute format('alter %s %s owner to idemkit',
            case r.typtype when 'd' then 'domain' else 'type' end, r.name);
        end loop;
      end $$
      """;

  /**
   * A directory from before passwords: started once as it was, its superuser given a password, then
   * stopped for the protected start.
   */
  private static String convertUnprotected(Path dataDir, int maxConnections) throws IOException {
    String password = newPassword();
    try (EmbeddedPostgres old = IdemkitDatabase.embeddedServer(dataDir, maxConnections).start();
        Connection c = old.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("alter role " + SUPERUSER + " password " + literal(password));
      write(dataDir.resolve(SUPERUSER_PASSWORD_FILE), password);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "Could not set a password on the embedded PostgreSQL in " + dataDir + ": " + e, e);
    }
    return password;
  }

  private static Connection superuser(int port, String database, String password)
      throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", SUPERUSER);
    props.setProperty("password", password);
    return DriverManager.getConnection(
        "jdbc:postgresql://localhost:" + port + "/" + database, props);
  }

  /** 32 random bytes, URL-safe base64: no quote, no backslash, no space. */
  private static String newPassword() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  private static String literal(String password) {
    return "'" + password.replace("'", "''") + "'";
  }

  private static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8).trim();
  }

  /** Written owner-only to a temporary file and moved into place: never half-written. */
  private static void write(Path file, String secret) throws IOException {
    Path tmp =
        Files.createTempFile(file.getParent(), file.getFileName().toString(), ".tmp", ownerOnly());
    try {
      Files.writeString(tmp, secret + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static java.nio.file.attribute.FileAttribute<?>[] ownerOnly() {
    return FileSystems.getDefault().supportedFileAttributeViews().contains("posix")
        ? new java.nio.file.attribute.FileAttribute<?>[] {
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))
        }
        : new java.nio.file.attribute.FileAttribute<?>[0];
  }
}
