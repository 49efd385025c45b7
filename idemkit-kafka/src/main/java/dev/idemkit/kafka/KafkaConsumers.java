package dev.idemkit.kafka;

import dev.idemkit.outbox.MessageHandler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * Starts a {@link KafkaEventConsumer} per consumer with shared settings (cluster, topic naming,
 * redelivery horizon, …) and closes them all together: what a framework's wiring (the Spring Boot
 * starter) hands each consumer registration to.
 */
public final class KafkaConsumers implements AutoCloseable {

  private final String bootstrapServers;
  private final DataSource dataSource;
  private final UnaryOperator<KafkaEventConsumer.Builder> settings;
  private final List<KafkaEventConsumer> started = new CopyOnWriteArrayList<>();

  /**
   * @param settings applied to every consumer's builder (topics, horizon, listeners, properties)
   */
  public KafkaConsumers(
      String bootstrapServers,
      DataSource dataSource,
      UnaryOperator<KafkaEventConsumer.Builder> settings) {
    this.bootstrapServers = bootstrapServers;
    this.dataSource = dataSource;
    this.settings = settings;
  }

  /**
   * Starts the consumer {@code name} of {@code aggregateTypes}' events, applying with handler.
   *
   * @throws IllegalStateException if the consumer refuses to start: a topic keeps records for as
   *     long as its inbox retention or longer, or for ever (see {@link KafkaEventConsumer#start})
   */
  public KafkaEventConsumer start(String name, MessageHandler handler, String... aggregateTypes) {
    KafkaEventConsumer consumer =
        settings
            .apply(KafkaEventConsumer.builder(bootstrapServers, name, dataSource, handler))
            .aggregateTypes(aggregateTypes)
            .build()
            .start();
    started.add(consumer);
    return consumer;
  }

  /** The consumers started so far (operators: held and parked messages). */
  public List<KafkaEventConsumer> consumers() {
    return List.copyOf(started);
  }

  @Override
  public void close() {
    for (KafkaEventConsumer c : started) {
      c.close();
    }
    started.clear();
  }
}
