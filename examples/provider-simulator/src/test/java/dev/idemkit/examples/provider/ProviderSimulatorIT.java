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
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/charges"))
            .timeout(timeout)
            .header("Idempotency-Key", key)
            .header("X-Merchant", "it")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"amount\":\"10.00\",\"currency\":\"EUR\",\"reference\":\""
                        + reference
                        + "\"}"));
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
  void countsSayWhatWasReallyCharged() throws Exception {
    HttpResponse<String> counts =
        HTTP.send(
            HttpRequest.newBuilder(uri("/charges")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(counts.statusCode()).isEqualTo(200);
    assertThat(counts.body()).contains("\"succeeded\":").contains("\"duplicateReferences\":0");
  }
}
