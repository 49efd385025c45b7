package dev.idemkit.examples.payments.web;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.mock.env.MockEnvironment;

/** The banner prints the demo keys in use, and never a deployment's own keys (secrets). */
class StartupBannerTest {

  private static final DemoApiKeys DEMO =
      new DemoApiKeys(
          Map.of("sk_test_demo_a", "tenant_demo_a"), Map.of("sk_test_admin", "demo_operator"));

  private final Logger logger = (Logger) LoggerFactory.getLogger(StartupBanner.class);
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

  @BeforeEach
  void capture() {
    logged.start();
    logger.addAppender(logged);
  }

  @AfterEach
  void release() {
    logger.detachAppender(logged);
  }

  @Test
  void ownKeysAreCountedNotPrinted() {
    banner(Map.of("sk_live_secret_1", "tenant_1"), Map.of());

    assertThat(logged.list)
        .singleElement()
        .extracting(ILoggingEvent::getFormattedMessage)
        .asString()
        .doesNotContain("sk_live_secret_1")
        .doesNotContain("sk_test_demo_a")
        .contains("sk_test_admin")
        .contains("1 key(s) of this deployment (not printed)");
  }

  @Test
  void theDemoPrintsItsKeys() {
    banner(Map.of(), Map.of());

    assertThat(logged.list)
        .singleElement()
        .extracting(ILoggingEvent::getFormattedMessage)
        .asString()
        .contains("sk_test_demo_a  -> tenant tenant_demo_a")
        .contains("sk_test_admin")
        .doesNotContain("not printed");
  }

  private static void banner(Map<String, String> own, Map<String, String> ownAdmin) {
    new StartupBanner(
            new MockEnvironment(), new ApiKeys(new PaymentsProperties(own, ownAdmin, 0, 0), DEMO))
        .ready();
  }
}
