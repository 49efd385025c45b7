package dev.idemkit.examples.payments.demo;

import dev.idemkit.examples.payments.receipts.MailProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Demo mode: with no {@code payments.mail.url}, the {@link MailSimulator} runs in this process on
 * {@code 127.0.0.1:payments.mail.embedded-port} (8082).
 */
@Component
public class EmbeddedMail implements DisposableBean {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedMail.class);

  private final MailSimulator simulator;

  public EmbeddedMail(MailProperties mail) {
    if (!mail.embedded()) {
      simulator = null;
      return;
    }
    try {
      simulator = MailSimulator.start(mail.embeddedPort(), mail.faults());
    } catch (IOException e) {
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
    }
  }
}
