package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import tools.jackson.databind.json.JsonMapper;

/**
 * What an operator reads: an ordinary payment logs nothing; a lost provider answer logs one INFO
 * line when the outcome becomes unknown and one when recovery resolves it (how, and after how
 * long).
 */
@ExtendWith(OutputCaptureExtension.class)
class LostAnswerLogsIT extends HttpTestSupport {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @Test
  void anOrdinaryPaymentLogsNothing(CapturedOutput output) {
    int before = output.getOut().length();
    HttpResponse<String> created =
        post("/v1/payments", TENANT_A, newKey(), payment("quiet-" + newKey(), "10.00"));
    assertThat(created.statusCode()).isEqualTo(201);
    String paymentId = JSON.readTree(created.body()).get("paymentId").asString();

    assertThat(output.getOut().substring(before)).doesNotContain(paymentId);
  }

  @Test
  void aLostAnswerLogsOneLineWhenUnknownAndOneWhenRecovered(CapturedOutput output)
      throws Exception {
    String key = newKey();
    String body = payment("lost-" + key, "25.00");
    HttpResponse<String> first =
        send(
            request(
                    uri("/v1/payments"),
                    Map.of(
                        "Authorization",
                        "Bearer " + TENANT_A,
                        "Content-Type",
                        "application/json",
                        "Idempotency-Key",
                        key,
                        "X-Provider-Fault",
                        "drop-after-charge"))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    assertThat(first.statusCode()).as(first.body()).isEqualTo(409);

    HttpResponse<String> done = post("/v1/payments", TENANT_A, key, body);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (done.statusCode() == 409 && System.nanoTime() < deadline) {
      Thread.sleep(200);
      done = post("/v1/payments", TENANT_A, key, body);
    }
    assertThat(done.statusCode()).as(done.body()).isEqualTo(201);
    String paymentId = JSON.readTree(done.body()).get("paymentId").asString();

    List<String> lines =
        Arrays.stream(output.getOut().split("\n")).filter(l -> l.contains(paymentId)).toList();
    assertThat(lines.stream().filter(l -> l.contains("answer to charge") && l.contains("was lost")))
        .hasSize(1)
        .allMatch(l -> l.contains(" INFO "));
    assertThat(
            lines.stream()
                .filter(l -> l.contains("recovered after a lost answer"))
                .filter(l -> l.contains("the provider had charged it"))
                .filter(l -> l.matches(".* after it was created.*")))
        .hasSize(1)
        .allMatch(l -> l.contains(" INFO "));
    assertThat(output.getOut()).doesNotContain(": OutcomePending");
  }
}
