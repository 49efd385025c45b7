package dev.idemkit.jdbc;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;

/**
 * A process that owns the embedded server on a data directory, writes a row, says {@code READY} and
 * waits to be killed: the application that {@link OrphanedServerIT} kills with {@code kill -9}.
 */
public final class EmbeddedServerOwnerMain {

  public static void main(String[] args) throws Exception {
    IdemkitDatabase db = IdemkitDatabase.embedded(Path.of(args[0]), 2);
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("create table if not exists survived (note text)");
      s.execute("insert into survived values ('" + args[1] + "')");
    }
    System.out.println("READY");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
