package dev.idemkit.examples.payments.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.examples.payments.receipts.MailProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.stereotype.Component;

/**
 * Demo mode: with no {@code payments.mail.url}, the {@link MailSimulator} runs in this process on
 * {@code 127.0.0.1:payments.mail.embedded-port} (8082), keeping what it sent in a database of its
 * own ({@code mail}) on the same PostgreSQL server, shared by every instance there.
 */
@Component
public class EmbeddedMail implements DisposableBean {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedMail.class);

  private final MailSimulator simulator;
  private final HikariDataSource dataSource;

  public EmbeddedMail(
      MailProperties mail, DataSource appDataSource, DataSourceProperties database) {
    if (!mail.embedded()) {
      simulator = null;
      dataSource = null;
      return;
    }
    EmbeddedProvider.ensureDatabase(appDataSource, "mail");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(EmbeddedProvider.withDatabase(database.getUrl(), "mail"));
    config.setUsername(database.getUsername());
    config.setPassword(database.getPassword());
    config.setMaximumPoolSize(4);
    config.setPoolName("mail-simulator");
    dataSource = new HikariDataSource(config);
    try {
      simulator = MailSimulator.start(mail.embeddedPort(), mail.faults(), dataSource);
    } catch (IOException e) {
      dataSource.close();
      throw new UncheckedIOException(
          "Could not start the mail simulator on port " + mail.embeddedPort(), e);
    }
    log.info("Mail simulator (demo mode) on http://127.0.0.1:{}", simulator.port());
  }

  /** The simulator, when it runs here; else null. */
  public MailSimulator simulator() {
    return simulator;
  }

  /** Its base URL, when it runs here; else null. */
  public String baseUrl() {
    return simulator == null ? null : "http://127.0.0.1:" + simulator.port();
  }

  @Override
  public void destroy() {
    if (simulator != null) {
      simulator.close();
      dataSource.close();
    }
  }
}
