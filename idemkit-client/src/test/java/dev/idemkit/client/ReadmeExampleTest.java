package dev.idemkit.client;

import static dev.idemkit.client.ScriptedServer.Reply;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ten lines of docs/getting-started.md's "The retrying client", against a scripted server
 * instead of the payments service on port 8080. Keep the two in step.
 */
class ReadmeExampleTest {

  @TempDir Path dir;

  @Test
  void theReadmeExampleRuns() {
    String body =
        "{\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\",\"merchantReference\":\"order-1001\"}";
    try (ScriptedServer server =
        ScriptedServer.start()
            .on(
                "/v1/payments",
                Reply.of(503),
                Reply.created("{\"paymentId\":\"p1\"}").header("Idempotent-Replayed", "true"))) {

      IdempotentClient client =
          IdempotentClient.builder()
              .baseUri(server.uri())
              .bearerToken("sk_test_demo_a")
              .retryPolicy(
                  RetryPolicy.builder().maxAttempts(8).deadline(Duration.ofSeconds(60)).build())
              .journal(
                  dir.resolve("payments.journal")) // optional: survives a crash of this process
              .build();

      client.journal().pending().forEach(client::resume); // after a restart: same keys, same bodies
      IdempotentResponse payment = client.post("/v1/payments").json(body).send();
      System.out.println(
          payment.status() + " replayed=" + payment.replayed() + " attempts=" + payment.attempts());

      assertThat(payment.status()).isEqualTo(201);
      assertThat(payment.replayed()).isTrue();
      assertThat(payment.attempts()).isEqualTo(2);
      assertThat(server.keys("/v1/payments")).containsOnly(payment.key());
      client.close();
    }
  }
}
