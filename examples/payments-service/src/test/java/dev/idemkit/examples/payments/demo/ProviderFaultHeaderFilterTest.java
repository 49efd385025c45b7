package dev.idemkit.examples.payments.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * The fault header reaches the charges sent by the thread serving its request, and no others: not
 * another thread at the same time (the recovery worker resuming a payment), not a later request.
 */
class ProviderFaultHeaderFilterTest {

  private final ProviderFaultHeaderFilter demoFilter = new ProviderFaultHeaderFilter();

  // No simulator runs: decorateCharge does not depend on it.
  private final EmbeddedProviderRequests requests = new EmbeddedProviderRequests("http://p.test");

  /** The fault header of a charge built now, on this thread. */
  private Optional<String> chargeFault() {
    HttpRequest.Builder charge = HttpRequest.newBuilder(URI.create("http://p.test/charges"));
    requests.decorateCharge(charge);
    return charge.build().headers().firstValue(ProviderFaultHeaderFilter.HEADER);
  }

  private static MockHttpServletRequest payment(String... faults) {
    MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/payments");
    for (String fault : faults) {
      request.addHeader(ProviderFaultHeaderFilter.HEADER, fault);
    }
    return request;
  }

  @Test
  void onlyTheServingThreadsChargesCarryTheFaultAndOnlyWhileItServes() throws Exception {
    AtomicReference<Optional<String>> serving = new AtomicReference<>();
    AtomicReference<Optional<String>> otherThread = new AtomicReference<>();

    demoFilter.doFilter(
        payment("drop-after-charge", "lookup-unavailable"),
        new MockHttpServletResponse(),
        (req, res) -> {
          serving.set(chargeFault());
          Thread worker = new Thread(() -> otherThread.set(chargeFault()));
          worker.start();
          try {
            worker.join();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });

    assertThat(serving.get()).hasValue("drop-after-charge,lookup-unavailable");
    assertThat(otherThread.get()).as("another thread meanwhile").isEmpty();
    assertThat(chargeFault()).as("after the request").isEmpty();
  }

  @Test
  void anUnknownFaultIsRefusedWith400BeforeAnyHandlerRuns() throws Exception {
    MockHttpServletResponse response = new MockHttpServletResponse();
    AtomicBoolean handled = new AtomicBoolean();

    demoFilter.doFilter(
        payment("drop-after-charge,no-such-fault"), response, (req, res) -> handled.set(true));

    assertThat(handled).isFalse();
    assertThat(response.getStatus()).isEqualTo(400);
    assertThat(response.getContentAsString()).contains("UNKNOWN_PROVIDER_FAULT");
  }
}
