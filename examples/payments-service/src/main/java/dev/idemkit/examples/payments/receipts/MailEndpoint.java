package dev.idemkit.examples.payments.receipts;

/**
 * Where receipt mails go when {@code payments.mail.url} does not say: a mail service this process
 * runs itself (the demo's simulator). Optional: with no such bean mails go to {@code
 * payments.mail.url}.
 */
public interface MailEndpoint {

  /** The mail service's base URL, e.g. {@code http://127.0.0.1:8082}. */
  String baseUrl();
}
