package dev.idemkit.examples.payments.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.examples.payments.receipts.MailEndpoint;
import dev.idemkit.examples.payments.receipts.MailProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import tools.jackson.databind.json.JsonMapper;

/**
 * Demo mode: with no {@code payments.mail.url}, the {@link MailSimulator} runs in this process on
 * {@code 127.0.0.1:payments.mail.embedded-port} (unset: the service's port + 2, 8082 by default),
 * keeping what it sent in a database of its own on the same PostgreSQL server, named after the
 * service's ({@code <database>_mail}) and shared by the instances that share the service's.
 */
public class EmbeddedMail implements MailEndpoint, DisposableBean {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedMail.class);

  private final MailSimulator simulator;
  private final HikariDataSource dataSource;

  public EmbeddedMail(
      MailProperties mail,
      DataSource appDataSource,
      DataSourceProperties database,
      JsonMapper json,
      int serverPort) {
    // A database and a port of this instance's own, so that two instances on one machine (or one
    // server) do not share them: the service's database name + _mail, the service's port + 2.
    String name = EmbeddedProvider.simulatorDatabase(database.getUrl(), "_mail");
    EmbeddedProvider.ensureDatabase(appDataSource, name, "mail", "payments.mail.url");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(EmbeddedProvider.withDatabase(database.getUrl(), name));
    config.setUsername(database.getUsername());
    config.setPassword(database.getPassword());
    config.setMaximumPoolSize(4);
    config.setPoolName("mail-simulator");
    dataSource = new HikariDataSource(config);
    boolean following = mail.embeddedPort() < 0;
    int port = following ? (serverPort == 0 ? 0 : serverPort + 2) : mail.embeddedPort();
    MailSimulator started;
    try {
      try {
        started = MailSimulator.start(port, mail.faults(), dataSource, json);
      } catch (BindException e) {
        if (!following || port == 0) {
          throw e;
        }
        log.info("Port {} is taken; the mail simulator takes any free port", port);
        started = MailSimulator.start(0, mail.faults(), dataSource, json);
      }
    } catch (IOException e) {
      dataSource.close();
      throw new UncheckedIOException(
          "Could not start the mail simulator on port "
              + port
              + ": "
              + e.getMessage()
              + ". Set payments.mail.embedded-port=0 for any free port.",
          e);
    }
    simulator = started;
    log.info(
        "Mail simulator (demo mode) on http://127.0.0.1:{}, database {}", simulator.port(), name);
  }

  /** The simulator. */
  public MailSimulator simulator() {
    return simulator;
  }

  /** Its base URL. */
  @Override
  public String baseUrl() {
    return "http://127.0.0.1:" + simulator.port();
  }

  @Override
  public void destroy() {
    simulator.close();
    dataSource.close();
  }
}
