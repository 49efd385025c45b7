package dev.idemkit.examples.payments.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.examples.payments.events.EventHandlers;
import dev.idemkit.examples.payments.events.RelayTransport;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.spi.EventTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * The demo's beans exist only under their switches; a deployment with its own provider and mail
 * service and no switch gets none of them.
 */
class DemoConfigurationTest {

  private final ApplicationContextRunner deployment =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  PropertyPlaceholderAutoConfiguration.class, DemoConfiguration.class))
          .withPropertyValues(
              "payments.provider.url=http://provider.test", "payments.mail.url=http://mail.test");

  @Test
  void aDeploymentWithItsOwnProviderAndMailServiceGetsNoDemoBean() {
    deployment.run(context -> assertThat(demoBeans(context)).isEmpty());
  }

  @Test
  void eachSwitchTurnsOnItsOwnPartOnly() {
    deployment
        .withPropertyValues("payments.faults.kill-at=after-request-sent")
        .run(context -> assertThat(demoBeans(context)).containsExactly("CrashPoints"));
    deployment
        .withPropertyValues("payments.events.faults.consumer-failure=0.2")
        .run(context -> assertThat(demoBeans(context)).containsExactly("EventFaults"));
    deployment
        .withPropertyValues("payments.events.faults.lost-ack=0")
        .run(context -> assertThat(demoBeans(context)).isEmpty());
  }

  @Test
  void eventFaultsLoseTheRelaysAcknowledgementsAndFailHandlersAfterTheyWrote() throws Exception {
    EventFaults always = new EventFaults(1, 1);
    EventTransport delivering =
        new EventTransport() {
          @Override
          public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
            return events.stream()
                .map(e -> (CompletionStage<Void>) CompletableFuture.<Void>completedFuture(null))
                .toList();
          }

          @Override
          public Duration redeliveryHorizon() {
            return Duration.ofDays(7);
          }
        };
    RelayTransport relay =
        (RelayTransport)
            always.postProcessAfterInitialization(new RelayTransport(delivering, 8), "relay");
    assertThat(relay.aggregateWindow()).isEqualTo(8);
    CompletionStage<Void> ack = relay.transport().send(Arrays.asList((EventEnvelope) null)).get(0);
    assertThat(ack.toCompletableFuture()).isCompletedExceptionally();

    List<String> written = new ArrayList<>();
    MessageHandler writing = (tx, message) -> written.add("row");
    EventHandlers handlers =
        (EventHandlers)
            always.postProcessAfterInitialization(
                new EventHandlers(Map.of("ledger", writing)), "handlers");
    assertThatThrownBy(() -> handlers.byName().get("ledger").apply(null, null))
        .hasMessageContaining("injected");
    assertThat(written).as("the handler wrote before it failed").containsExactly("row");
  }

  /** The simple names of the beans of the demo package's classes, the configuration aside. */
  private static List<String> demoBeans(ApplicationContext context) {
    return Arrays.stream(context.getBeanDefinitionNames())
        .map(context::getType)
        .filter(type -> type != null && type.getPackage() == DemoConfiguration.class.getPackage())
        .filter(type -> !DemoConfiguration.class.isAssignableFrom(type))
        .map(Class::getSimpleName)
        .toList();
  }
}
