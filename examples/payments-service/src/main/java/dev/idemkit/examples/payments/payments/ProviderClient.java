package dev.idemkit.examples.payments.payments;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * The downstream provider, as the payment phases see it. What each failure means is decided here:
 * nothing sent, or a documented "nothing charged" answer, is {@link Attempt.NotCharged} (safe to
 * call again); anything after the request may have arrived (a dropped connection, a timeout, an odd
 * answer) is {@link Attempt.Unknown}, for recovery to ask about. A {@link ProviderRequests} bean,
 * if there is one, may say where the provider is and add headers to a charge.
 */
@Component
public class ProviderClient {

  /** The merchant this service is at the provider. */
  public static final String MERCHANT = "idemkit-payments";

  /** What the provider answered to a charge (or a lookup); its other fields are not needed. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Charge(String chargeId, String status) {
    public boolean declined() {
      return "DECLINED".equals(status);
    }
  }

  /** What a charge request came to. */
  public sealed interface Attempt {
    /** The provider answered: charged, or declined ({@link Charge#declined()}). */
    record Answered(Charge charge) implements Attempt {}

    /** Nothing was charged: the request never left, or the provider refused it before charging. */
    record NotCharged(String reason) implements Attempt {}

    /** The request may have arrived; only asking the provider can tell. */
    record Unknown(String reason) implements Attempt {}
  }

  /** What the provider says it did under a key. */
  public sealed interface Lookup {
    /** It charged (or declined) under the key. */
    record Found(Charge charge) implements Lookup {}

    /** It never charged under the key. */
    record NoCharge() implements Lookup {}

    /** It cannot say now. */
    record Unavailable(String reason) implements Lookup {}
  }

  /** The body of a charge request. */
  private record ChargeRequest(String amount, String currency, String reference) {}

  private final ProviderProperties properties;
  private final Optional<ProviderRequests> requests;
  private final JsonMapper json;
  private final HttpClient http;

  public ProviderClient(
      ProviderProperties properties, ObjectProvider<ProviderRequests> requests, JsonMapper json) {
    this.properties = properties;
    this.requests = Optional.ofNullable(requests.getIfAvailable());
    this.json = json;
    this.http = HttpClient.newBuilder().connectTimeout(properties.timeout()).build();
  }

  private String base() {
    return requests.flatMap(ProviderRequests::baseUrl).orElse(properties.url());
  }

  /** Charges under {@code key}; the provider charges at most once per key. */
  public Attempt charge(String key, String amount, String currency, String reference)
      throws InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base() + "/charges"))
            .timeout(properties.timeout())
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .header("X-Merchant", MERCHANT)
            .POST(
                HttpRequest.BodyPublishers.ofByteArray(
                    json.writeValueAsBytes(new ChargeRequest(amount, currency, reference))));
    requests.ifPresent(r -> r.decorateCharge(request));
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException | HttpConnectTimeoutException e) {
      return new Attempt.NotCharged("provider unreachable; nothing was sent (" + e + ")");
    } catch (IOException e) {
      return new Attempt.Unknown("the answer was lost: " + e);
    }
    int status = response.statusCode();
    if (status == 201 || status == 402) {
      return new Attempt.Answered(json.readValue(response.body(), Charge.class));
    }
    if (status == 503) {
      return new Attempt.NotCharged("provider answered 503 before charging");
    }
    return new Attempt.Unknown("provider answered " + status);
  }

  /**
   * What the provider did under {@code key}.
   *
   * @return the charge, no charge, or unavailable when it cannot say now
   */
  public Lookup lookup(String key) throws InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create(
                    base()
                        + "/charges?idempotencyKey="
                        + URLEncoder.encode(key, StandardCharsets.UTF_8)))
            .timeout(properties.timeout())
            .header("X-Merchant", MERCHANT)
            .GET()
            .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      return new Lookup.Unavailable("provider lookup failed: " + e);
    }
    return switch (response.statusCode()) {
      case 200 -> new Lookup.Found(json.readValue(response.body(), Charge.class));
      case 404 -> new Lookup.NoCharge();
      default -> new Lookup.Unavailable("provider lookup answered " + response.statusCode());
    };
  }
}
