package dev.idemkit.examples.payments.receipts;

import dev.idemkit.outbox.DeliverySender;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Sends a recorded receipt mail: {@code POST /messages} with the delivery key as {@code
 * Idempotency-Key}, so that the mail service sends one mail per key however often it is asked (a
 * lost answer, a crash before the delivery was marked).
 */
public final class MailClient implements DeliverySender.Receiver {

  private final Supplier<String> baseUrl;
  private final Duration timeout;
  private final HttpClient http;

  public MailClient(Supplier<String> baseUrl, Duration timeout) {
    this.baseUrl = baseUrl;
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  @Override
  public void deliver(String idempotencyKey, String payload) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(baseUrl.get() + "/messages"))
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", idempotencyKey)
            .POST(HttpRequest.BodyPublishers.ofString(payload))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IOException("mail service answered " + response.statusCode());
    }
  }
}
