package dev.idemkit.client;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The client process that {@link JournalCrashIT} kills: it journals one payment and keeps sending
 * it, with the same key, through a proxy that drops every answer, until it is killed.
 *
 * <p>Arguments: the journal file, the base URI (the proxy), the merchant reference.
 */
public final class JournalCrashMain {

  private JournalCrashMain() {}

  public static void main(String[] args) {
    Path journal = Path.of(args[0]);
    URI baseUri = URI.create(args[1]);
    String merchantReference = args[2];
    IdempotentClient client =
        IdempotentClient.builder()
            .baseUri(baseUri)
            .bearerToken(PaymentsServiceProcess.API_KEY)
            .requestTimeout(Duration.ofSeconds(5))
            .retryPolicy(
                RetryPolicy.builder()
                    .maxAttempts(10_000)
                    .initialBackoff(Duration.ofMillis(100))
                    .maxBackoff(Duration.ofMillis(500))
                    .deadline(Duration.ofMinutes(10))
                    .build())
            .journal(journal)
            .build();
    System.out.println("sending payment " + merchantReference + " through " + baseUri);
    IdempotentResponse response =
        client.post("/v1/payments").json(RetryingClientIT.payment(merchantReference)).send();
    // Not reached while the proxy drops every answer: the test kills this process first.
    System.out.println("finished unexpectedly: " + response);
    System.exit(3);
  }
}
