package dev.idemkit.examples.payments.receipts;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code payments.mail.*}: where receipt mails go.
 *
 * @param url the mail service's base URL; empty: start the mail simulator in-process (demo mode)
 * @param timeout how long a delivery may take before it counts as failed (and is retried)
 * @param embeddedPort the in-process simulator's port (0: any free port; unset: the service's port
 *     + 2, or any free port if that is taken)
 * @param faults the in-process simulator's random faults, e.g. {@code
 *     drop-after-accept:0.1,unavailable:0.05}
 */
@ConfigurationProperties("payments.mail")
public record MailProperties(String url, Duration timeout, Integer embeddedPort, String faults) {

  public MailProperties {
    timeout = timeout == null ? Duration.ofSeconds(2) : timeout;
    embeddedPort = embeddedPort == null ? -1 : embeddedPort;
  }
}
