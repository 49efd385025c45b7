package dev.idemkit.examples.payments.demo;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.idemkit.examples.payments.PaymentsProperties;
import dev.idemkit.examples.payments.web.ApiKeys;
import dev.idemkit.examples.payments.web.DemoApiKeys;
import dev.idemkit.spi.KeyProvider;
import dev.idemkit.spring.boot.IdemkitProperties;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.mock.env.MockEnvironment;

/**
 * Outside the embedded demo, the demo API keys still accepted are named in a WARN at start-up; the
 * ones a deployment's own keys ended are not, and the embedded demo says nothing.
 */
class DemoKeysWarningTest {

  private static final DemoApiKeys DEMO =
      new DemoApiKeys(
          Map.of("sk_test_demo_a", "tenant_demo_a", "sk_test_demo_b", "tenant_demo_b"),
          Map.of("sk_test_admin", "demo_operator"));

  private final Logger logger = (Logger) LoggerFactory.getLogger(DemoKeysWarning.class);
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
  void aDeploymentWithNoKeysOfItsOwnIsToldEveryDemoKey() {
    check(false, Map.of(), Map.of());

    assertThat(warnings())
        .singleElement()
        .asString()
        .contains("sk_test_admin, sk_test_demo_a, sk_test_demo_b")
        .contains("payments.api-keys.<key>=<tenant>");
  }

  @Test
  void onlyTheDemoKeysOfAMapWithoutKeysOfItsOwnAreNamed() {
    check(false, Map.of("sk_live_1", "tenant_1"), Map.of());
    assertThat(warnings())
        .singleElement()
        .asString()
        .contains("demo API key(s) sk_test_admin ")
        .doesNotContain("sk_test_demo_a");

    logged.list.clear();
    check(false, Map.of("sk_live_1", "tenant_1"), Map.of("sk_live_ops", "ops"));
    assertThat(warnings()).isEmpty();
  }

  @Test
  void theEmbeddedDemoSaysNothing() {
    check(true, Map.of(), Map.of());

    assertThat(warnings()).isEmpty();
  }

  private void check(boolean embedded, Map<String, String> own, Map<String, String> ownAdmin) {
    MockEnvironment environment =
        new MockEnvironment().withProperty("idemkit.embedded.active", String.valueOf(embedded));
    PaymentsProperties properties = new PaymentsProperties(own, ownAdmin, 0, 0, null);
    new DemoKeysWarning(
            environment,
            new IdemkitProperties(),
            new StaticListableBeanFactory().getBeanProvider(KeyProvider.class),
            new ApiKeys(properties, DEMO))
        .check();
  }

  private List<String> warnings() {
    return logged.list.stream()
        .filter(e -> e.getLevel() == Level.WARN)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }
}
