package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.InboxConsumer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The inbox cleanup's scheduling: on by default, off when told, absent without the outbox. */
class IdemkitInboxAutoConfigurationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemkitInboxAutoConfiguration.class));

  @Test
  void theInboxCleanupIsScheduledByDefaultEveryMinute() {
    runner.run(
        context -> {
          assertThat(context).hasSingleBean(InboxCleanupWorker.class);
          assertThat(context.getBean(InboxCleanupWorker.class).isRunning()).isTrue();
          assertThat(context.getBean(IdemkitProperties.class).getInbox().getCleanup().getInterval())
              .isEqualTo(Duration.ofMinutes(1));
        });
  }

  @Test
  void itCanBeTurnedOff() {
    runner
        .withPropertyValues("idemkit.inbox.cleanup.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(InboxCleanupWorker.class));
    runner
        .withPropertyValues("idemkit.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(InboxCleanupWorker.class));
  }

  @Test
  void withoutTheOutboxModuleThereIsNothingToClean() {
    runner
        .withClassLoader(new FilteredClassLoader(InboxConsumer.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(InboxCleanupWorker.class);
            });
  }

  @Test
  void aNonPositiveIntervalIsRefused() {
    runner
        .withPropertyValues("idemkit.inbox.cleanup.interval=0s")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("idemkit.inbox.cleanup.interval"));
  }
}
