package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's curl walk-through, run as written (host and port aside): a payment created,
 * replayed, refused on a changed amount, refused without a key.
 */
class ReadmeCurlIT extends HttpTestSupport {

  private static final Pattern CURL =
      Pattern.compile("```sh\\n(curl -i -X POST [^`]*?)```", Pattern.DOTALL);
  private static final Pattern QUOTED = Pattern.compile("-(H|d) '([^']*)'");

  private List<HttpRequest> readmeRequests() throws Exception {
    String readme = Files.readString(Path.of("../../README.md"));
    List<HttpRequest> requests = new ArrayList<>();
    Matcher block = CURL.matcher(readme);
    while (block.find()) {
      String command = block.group(1).replace("\\\n", " ");
      String path = command.split("\\s+")[4].replace("localhost:8080", "");
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
      String body = "";
      Matcher q = QUOTED.matcher(command);
      while (q.find()) {
        if (q.group(1).equals("H")) {
          String[] header = q.group(2).split(":\\s*", 2);
          b.header(header[0], header[1]);
        } else {
          body = q.group(2);
        }
      }
      requests.add(b.POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }
    return requests;
  }

  @Test
  void theReadmeWalkThroughDoesWhatTheReadmeSays() throws Exception {
    // A fresh database per test JVM: the README's keys and references are unused here.
    List<HttpRequest> requests = readmeRequests();
    assertThat(requests).hasSize(4);

    HttpResponse<String> created = send(requests.get(0));
    HttpResponse<String> replayed = send(requests.get(0));
    HttpResponse<String> changed = send(requests.get(1));
    HttpResponse<String> noKey = send(requests.get(2));

    assertThat(created.statusCode()).isEqualTo(201);
    assertThat(created.headers().firstValue("Location")).isPresent();
    assertThat(replayed.statusCode()).isEqualTo(201);
    assertThat(replayed.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(replayed.body()).isEqualTo(created.body());
    assertThat(changed.statusCode()).isEqualTo(422);
    assertThat(changed.body()).contains("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
    assertThat(noKey.statusCode()).isEqualTo(400);
    assertThat(noKey.body()).contains("IDEMPOTENCY_KEY_MISSING");
    assertThat(paymentsFor("order-1001")).isEqualTo(1);
    assertThat(paymentsFor("order-1002")).isZero();

    HttpResponse<String> lost = send(requests.get(3));
    HttpResponse<String> again = send(requests.get(3));
    assertThat(lost.statusCode()).isEqualTo(409);
    assertThat(lost.body()).contains("IDEMPOTENCY_OUTCOME_PENDING");
    assertThat(lost.headers().firstValue("Retry-After")).isPresent();
    assertThat(again.statusCode()).as(again.body()).isEqualTo(201);
    assertThat(again.body())
        .contains("\"status\":\"COMPLETED\"")
        .contains("\"providerChargeId\":\"ch_");
    assertThat(paymentsFor("order-2001")).isEqualTo(1);
  }
}
