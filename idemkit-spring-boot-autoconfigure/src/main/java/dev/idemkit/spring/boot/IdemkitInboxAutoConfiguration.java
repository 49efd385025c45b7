package dev.idemkit.spring.boot;

import dev.idemkit.outbox.InboxConsumer;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.stream.Stream;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The inbox consumers' cleanup ({@code idemkit.inbox.cleanup.*}), when {@code idemkit-outbox} is on
 * the class path: on every instance, by default, for every {@link InboxConsumer} bean and every
 * consumer an {@link Inboxes} bean lists (the Kafka consumers the starter starts have one).
 */
@AutoConfiguration
@ConditionalOnClass(InboxConsumer.class)
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitInboxAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "idemkit.inbox.cleanup", name = "enabled", matchIfMissing = true)
  public InboxCleanupWorker idemkitInboxCleanupWorker(
      ObjectProvider<InboxConsumer> consumers,
      ObjectProvider<Inboxes> inboxes,
      IdemkitProperties properties) {
    return new InboxCleanupWorker(
        () -> {
          // Each consumer once, though a bean and an Inboxes bean may both name it.
          Set<InboxConsumer> seen = Collections.newSetFromMap(new IdentityHashMap<>());
          return Stream.concat(
                  consumers.orderedStream(),
                  inboxes.orderedStream().flatMap(i -> i.inboxes().stream()))
              .filter(seen::add)
              .toList();
        },
        properties.getInbox().getCleanup().getInterval());
  }
}
