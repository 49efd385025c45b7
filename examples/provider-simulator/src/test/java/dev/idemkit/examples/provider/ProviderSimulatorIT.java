package dev.idemkit.examples.provider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.jdbc.IdemkitDatabase;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Each fault does what its name says, and the provider charges at most once per key. */
class ProviderSimulatorIT {

  static Path dataDir;
  static IdemkitDatabase db;
  static ProviderSimulator simulator;
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    dataDir = Files.createTempDirectory("provider-it");
    db = IdemkitDatabase.embedded(dataDir, 10);
    simulator =
        ProviderSimulator.start(
            ProviderSimulator.Config.defaults(0)
                .withLateAnswer(Duration.ofSeconds(2))
                // Long enough that a loaded machine still sends the next lookup inside it.
                .withLookupOutage(Duration.ofSeconds(3)),
            db.dataSource());
  }

  @AfterAll
  static void stop() {
    simulator.close();
    db.close();
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      System.err.println("Could not remove " + dataDir + ": " + e);
    }
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + simulator.port() + path);
  }

  private HttpResponse<String> charge(String key, String reference, String fault, Duration timeout)
      throws Exception {
    return post(
        key,
        "{\"amount\":\"10.00\",\"currency\":\"EUR\",\"reference\":\"" + reference + "\"}",
        fault,
        timeout);
  }

  private HttpResponse<String> post(String key, String body, String fault, Duration timeout)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/charges"))
            .timeout(timeout)
            .header("Idempotency-Key", key)
            .header("X-Merchant", "it")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (fault != null) {
      b.header("X-Provider-Fault", fault);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> charge(String key, String reference, String fault) throws Exception {
    return charge(key, reference, fault, Duration.ofSeconds(10));
  }

  private HttpResponse<String> lookup(String key) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(uri("/charges?idempotencyKey=" + key))
            .header("X-Merchant", "it")
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private long chargesFor(String reference) throws Exception {
    try (var c = db.dataSource().getConnection();
        var ps =
            c.prepareStatement(
                "select count(*) from provider_charge where reference = ? and status = 'SUCCEEDED'")) {
      ps.setString(1, reference);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static String key() {
    return "provider_payment_" + UUID.randomUUID();
  }

  @Test
  void aChargeIsMadeOncePerKeyAndReplayed() throws Exception {
    String key = key();
    HttpResponse<String> first = charge(key, "ref-once", null);
    HttpResponse<String> again = charge(key, "ref-once", null);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(again.statusCode()).isEqualTo(201);
    assertThat(again.body()).isEqualTo(first.body());
    assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(chargesFor("ref-once")).isEqualTo(1);
    assertThat(lookup(key).body())
        .contains(
            first.body().substring(first.body().indexOf("ch_"), first.body().indexOf("ch_") + 23));
  }

  @Test
  void errorBeforeChargeChargesNothing() throws Exception {
    String key = key();
    HttpResponse<String> failed = charge(key, "ref-503", "error-before-charge");
    assertThat(failed.statusCode()).isEqualTo(503);
    assertThat(chargesFor("ref-503")).isZero();
    assertThat(lookup(key).statusCode()).isEqualTo(404);

    assertThat(charge(key, "ref-503", null).statusCode()).isEqualTo(201);
    assertThat(chargesFor("ref-503")).isEqualTo(1);
  }

  @Test
  void aDeclineIsReplayedAndChargesNothing() throws Exception {
    String key = key();
    HttpResponse<String> declined = charge(key, "ref-decline", "decline");
    HttpResponse<String> again = charge(key, "ref-decline", null);
    assertThat(declined.statusCode()).isEqualTo(402);
    assertThat(declined.body()).contains("DECLINED");
    assertThat(again.statusCode()).isEqualTo(402);
    assertThat(again.body()).isEqualTo(declined.body());
    assertThat(chargesFor("ref-decline")).isZero();
  }

  @Test
  void dropAfterChargeChargesThenSaysNothing() throws Exception {
    String key = key();
    assertThatThrownBy(() -> charge(key, "ref-drop", "drop-after-charge"))
        .isInstanceOf(IOException.class);
    assertThat(chargesFor("ref-drop")).isEqualTo(1);
    assertThat(lookup(key).statusCode()).isEqualTo(200);
    HttpResponse<String> retry = charge(key, "ref-drop", null);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(chargesFor("ref-drop")).isEqualTo(1);
  }

  @Test
  void timeoutAfterChargeAnswersTooLate() throws Exception {
    String key = key();
    assertThatThrownBy(
            () -> charge(key, "ref-late", "timeout-after-charge", Duration.ofMillis(500)))
        .isInstanceOf(HttpTimeoutException.class);
    assertThat(chargesFor("ref-late")).isEqualTo(1);
    assertThat(lookup(key).statusCode()).isEqualTo(200);
  }

  @Test
  void lookupsCanBeDownForAWhile() throws Exception {
    String key = key();
    assertThat(charge(key, "ref-lookup", "lookup-unavailable").statusCode()).isEqualTo(201);
    assertThat(lookup(key).statusCode()).isEqualTo(503);
    long deadline = System.currentTimeMillis() + 20_000;
    int status;
    do {
      Thread.sleep(100); // waits for the simulator's real outage window to end
      status = lookup(key).statusCode();
    } while (status == 503 && System.currentTimeMillis() < deadline);
    assertThat(status).isEqualTo(200);
  }

  @Test
  void aLookupOutageIsThatChargesOnly() throws Exception {
    String other = key();
    String faulted = key();
    assertThat(charge(other, "ref-lookup-other", null).statusCode()).isEqualTo(201);
    assertThat(charge(faulted, "ref-lookup-own", "lookup-unavailable").statusCode()).isEqualTo(201);

    // Another charge's lookup is not paused by this request's fault.
    assertThat(lookup(other).statusCode()).isEqualTo(200);
  }

  @Test
  void anUnknownFaultIsRefusedAndChargesNothing() throws Exception {
    String key = key();
    HttpResponse<String> refused = charge(key, "ref-unknown-fault", "drop-after-chrage");

    assertThat(refused.statusCode()).isEqualTo(400);
    assertThat(refused.body()).contains("unknown_fault").contains("drop-after-charge");
    assertThat(chargesFor("ref-unknown-fault")).isZero();
    assertThat(lookup(key).statusCode()).isEqualTo(404);
  }

  @Test
  void theChargesAreListedWithWhatTheyAddUpTo() throws Exception {
    String key = key();
    String id =
        charge(key, "ref-listed", null)
            .body()
            .replaceAll(".*\"chargeId\":\"(ch_[0-9a-f]{20})\".*", "$1");
    charge(key(), "ref-listed", "decline");

    HttpResponse<String> all =
        HTTP.send(
            HttpRequest.newBuilder(uri("/charges")).build(), HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> one =
        HTTP.send(
            HttpRequest.newBuilder(uri("/charges?reference=ref-listed")).build(),
            HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> newest =
        HTTP.send(
            HttpRequest.newBuilder(uri("/charges?limit=1")).build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(all.statusCode()).isEqualTo(200);
    assertThat(all.body())
        .contains("\"chargeId\":\"" + id + "\"")
        .contains("\"duplicateReferences\":0");
    assertThat(one.body())
        .matches(
            "\\{\"charges\":\\[\\{\"amount\":\"10\",\"chargeId\":\"ch_[0-9a-f]{20}\","
                + "\"createdAt\":\"[0-9T:.Z-]+\",\"currency\":\"EUR\",\"idempotencyKey\":\""
                + "provider_payment_[0-9a-f-]{36}\",\"merchant\":\"it\",\"reference\":\"ref-listed\","
                + "\"status\":\"DECLINED\"},\\{\"amount\":\"10\",\"chargeId\":\""
                + id
                + "\",\"createdAt\":\"[0-9T:.Z-]+\",\"currency\":\"EUR\",\"idempotencyKey\":\""
                + key
                + "\",\"merchant\":\"it\",\"reference\":\"ref-listed\",\"status\":\"SUCCEEDED\"}],"
                + "\"summary\":\\{\"declined\":1,\"distinctReferences\":1,"
                + "\"duplicateReferences\":0,\"succeeded\":1}}");
    assertThat(newest.body()).contains("\"chargeId\":\"ch_").doesNotContain("},{");
  }

  @Test
  void answersAreJsonWithTheirKeysInAlphabeticalOrder() throws Exception {
    String key = key();
    HttpResponse<String> charged =
        post(
            key,
            "{\"amount\":\"10.00\",\"currency\":\"EUR\",\"reference\":\"ref-wire \\\"q\\\"\"}",
            null,
            Duration.ofSeconds(10));
    String id = charged.body().replaceAll(".*\"chargeId\":\"(ch_[0-9a-f]{20})\".*", "$1");

    assertThat(charged.statusCode()).isEqualTo(201);
    assertThat(charged.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(charged.body())
        .isEqualTo(
            "{\"amount\":\"10.00\",\"chargeId\":\""
                + id
                + "\",\"currency\":\"EUR\",\"reference\":\"ref-wire \\\"q\\\"\","
                + "\"status\":\"SUCCEEDED\"}");
    assertThat(lookup(key).body())
        .isEqualTo(
            "{\"amount\":\"10\",\"chargeId\":\""
                + id
                + "\",\"currency\":\"EUR\",\"reference\":\"ref-wire \\\"q\\\"\","
                + "\"status\":\"SUCCEEDED\"}");
    assertThat(lookup(key()).body()).isEqualTo("{\"error\":\"no_such_charge\"}");
    assertThat(charge(key(), "ref-wire-503", "error-before-charge").body())
        .isEqualTo("{\"charged\":false,\"error\":\"temporarily_unavailable\"}");
    assertThat(charge(key(), "ref-wire-fault", "nope").body())
        .isEqualTo(
            "{\"error\":\"unknown_fault\",\"known\":[\"latency\",\"error-before-charge\","
                + "\"decline\",\"drop-after-charge\",\"timeout-after-charge\",\"lookup-unavailable\"]}");
    assertThat(
            HTTP.send(
                    HttpRequest.newBuilder(uri("/charges?reference=ref-wire-none")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .body())
        .isEqualTo(
            "{\"charges\":[],\"summary\":{\"declined\":0,\"distinctReferences\":0,"
                + "\"duplicateReferences\":0,\"succeeded\":0}}");
  }

  @Test
  void aDeclineSaysWhy() throws Exception {
    HttpResponse<String> declined = charge(key(), "ref-wire-decline", "decline");

    assertThat(declined.body())
        .matches(
            "\\{\"amount\":\"10.00\",\"chargeId\":\"ch_[0-9a-f]{20}\",\"currency\":\"EUR\","
                + "\"declineCode\":\"card_declined\",\"reference\":\"ref-wire-decline\","
                + "\"status\":\"DECLINED\"}");
  }

  @Test
  void aChargeMayGiveItsAmountAsANumberAndCarryOtherFields() throws Exception {
    HttpResponse<String> charged =
        post(
            key(),
            " { \"amount\" : 12.50, \"currency\": \"EUR\", \"reference\": \"ref-num\\u00e9\","
                + " \"note\": null } ",
            null,
            Duration.ofSeconds(10));

    assertThat(charged.statusCode()).as(charged.body()).isEqualTo(201);
    assertThat(charged.body()).contains("\"amount\":\"12.50\"").contains("\"ref-num\u00e9\"");
    assertThat(chargesFor("ref-num\u00e9")).isEqualTo(1);
  }

  @Test
  void aBodyThatIsNotAFlatJsonObjectIsRefusedAndChargesNothing() throws Exception {
    for (String bad :
        java.util.List.of(
            "",
            "[]",
            "null",
            "{\"amount\":{\"b\":\"c\"},\"currency\":\"EUR\",\"reference\":\"ref-bad\"}",
            "{\"amount\":[1],\"currency\":\"EUR\",\"reference\":\"ref-bad\"}",
            "{\"amount\":\"1\"",
            "{\"amount\":\"1\",\"currency\":\"EUR\",\"reference\":\"ref-bad\"} x",
            "{\"amount\":nope}",
            "{amount:\"1\"}")) {
      HttpResponse<String> refused = post(key(), bad, null, Duration.ofSeconds(10));

      assertThat(refused.statusCode()).as(bad).isEqualTo(400);
      assertThat(refused.body()).as(bad).isEqualTo("{\"error\":\"invalid_json\"}");
    }
    assertThat(chargesFor("ref-bad")).isZero();
  }
}
