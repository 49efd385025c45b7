package dev.idemkit.examples.payments;

import dev.idemkit.examples.payments.events.Consumers;
import dev.idemkit.examples.payments.events.EventHandlers;
import dev.idemkit.examples.payments.events.EventsProperties;
import dev.idemkit.examples.payments.events.RelayTransport;
import dev.idemkit.examples.payments.ledger.LedgerConsumer;
import dev.idemkit.examples.payments.receipts.MailClient;
import dev.idemkit.examples.payments.receipts.MailEndpoint;
import dev.idemkit.examples.payments.receipts.MailProperties;
import dev.idemkit.examples.payments.receipts.ReceiptsConsumer;
import dev.idemkit.examples.payments.shards.Lanes;
import dev.idemkit.examples.payments.shipping.ShippingConsumer;
import dev.idemkit.kafka.KafkaConsumers;
import dev.idemkit.micrometer.OutboxMetrics;
import dev.idemkit.outbox.Deliveries;
import dev.idemkit.outbox.DeliverySender;
import dev.idemkit.outbox.EmbeddedTransport;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.MessageHandler;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.OutboxRelay;
import dev.idemkit.outbox.OutboxSchema;
import dev.idemkit.outbox.spi.EventTransport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/**
 * What happens after a payment: the outbox, its relay, the embedded transport (no broker: the relay
 * hands each event to the consumers' inboxes in this process) or, with {@code
 * idemkit.events.kafka.bootstrap-servers} set, Kafka (the starter's transport and consumer groups),
 * the three consumers (ledger, receipts, shipping) and the receipt mail sender. Several instances
 * of the service on one database relay and consume safely together. With {@code idemkit.shards.*}
 * the relay and the sender run once per shard ({@link Lanes}).
 */
@Configuration
public class EventFlow {

  /**
   * The outbox, its tables applied (their own Flyway history) before anything appends, and after
   * the application's own migrations, which must find the schema as they left it.
   */
  @Bean
  @DependsOnDatabaseInitialization
  public Outbox outbox(DataSource dataSource, Lanes lanes, EventsProperties events) {
    for (String lane : lanes.names()) {
      OutboxSchema.migrate(lanes.pool(lane));
    }
    return Outbox.builder(dataSource).maxPayloadBytes(events.maxPayloadBytes()).build();
  }

  @Bean
  public Deliveries deliveries(DataSource dataSource, Outbox outbox) {
    return Deliveries.create(dataSource);
  }

  /** The three consumers' handlers, by consumer (and inbox) name. */
  @Bean
  public EventHandlers eventHandlers(Deliveries deliveries, JsonMapper json) {
    Map<String, MessageHandler> handlers = new LinkedHashMap<>();
    handlers.put(LedgerConsumer.NAME, new LedgerConsumer(json));
    handlers.put(ReceiptsConsumer.NAME, new ReceiptsConsumer(deliveries, json));
    handlers.put(ShippingConsumer.NAME, new ShippingConsumer(json));
    return new EventHandlers(handlers);
  }

  @Bean
  public Consumers consumers(
      DataSource dataSource,
      EventHandlers handlers,
      EventsProperties events,
      OutboxMetrics metrics,
      ObjectProvider<KafkaConsumers> kafka) {
    Map<String, InboxConsumer> byName = new LinkedHashMap<>();
    KafkaConsumers onKafka = kafka.getIfAvailable();
    if (onKafka != null) {
      // idemkit.events.kafka.bootstrap-servers is set: each consumer is a Kafka consumer group
      // reading the payment and order topics, its inbox the same as below.
      handlers
          .byName()
          .forEach(
              (name, handler) ->
                  byName.put(name, onKafka.start(name, handler, "payment", "order").inbox()));
      metrics.expect(byName.values());
      return new Consumers(byName);
    }
    handlers
        .byName()
        .forEach(
            (name, handler) ->
                byName.put(
                    name,
                    InboxConsumer.builder(name, dataSource, handler)
                        .maxAttempts(events.consumerMaxAttempts())
                        .retention(events.inboxRetention())
                        .redeliveryHorizon(events.redeliveryHorizon())
                        .listener(metrics)
                        .build()));
    // Their counters exist from the start, at 0: a rate over them reads 0, not "no data".
    metrics.expect(byName.values());
    return new Consumers(byName);
  }

  @Bean
  public OutboxMetrics outboxMetrics(
      Outbox outbox, DataSource dataSource, Deliveries deliveries, Lanes lanes) {
    // Every lane's backlog; parked and held messages across every consumer, one query each per
    // lane; parked mails.
    return new OutboxMetrics(
            () -> backlog(outbox, lanes),
            () -> lanes.sum(() -> countInbox(dataSource, "PARKED")),
            () -> lanes.sum(() -> countInbox(dataSource, "HELD")),
            java.time.Clock.systemUTC(),
            java.time.Duration.ofSeconds(5))
        .parkedDeliveries(() -> lanes.sum(deliveries::parkedCount));
  }

  /** The lanes' backlogs together: the oldest unsent event is the oldest of any lane. */
  private static Outbox.Backlog backlog(Outbox outbox, Lanes lanes) throws Exception {
    Outbox.Backlog all = Outbox.Backlog.NONE;
    for (String lane : lanes.names()) {
      all = all.plus(lanes.on(lane, outbox::backlog));
    }
    return all;
  }

  private static long countInbox(DataSource dataSource, String status) throws Exception {
    try (var c = dataSource.getConnection();
        var s = c.prepareStatement("select count(*) from idemkit_inbox where status = ?")) {
      s.setString(1, status);
      try (var rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * A broker's transport (Kafka, when {@code idemkit.events.kafka.bootstrap-servers} is set), else
   * the embedded one handing events to this process's inboxes.
   */
  @Bean
  public RelayTransport relayTransport(
      Consumers consumers, EventsProperties events, ObjectProvider<EventTransport> broker) {
    EventTransport transport = broker.getIfAvailable();
    if (transport == null) {
      EmbeddedTransport embedded = EmbeddedTransport.create(events.redeliveryHorizon());
      consumers.all().forEach(embedded::subscribe);
      return new RelayTransport(
          embedded, events.aggregateWindow() == null ? 1 : events.aggregateWindow());
    }
    // Kafka consumers apply each aggregate's events in sequence (holding one that comes early),
    // so a round may carry several events of one aggregate.
    return new RelayTransport(
        transport, events.aggregateWindow() == null ? 8 : events.aggregateWindow());
  }

  /**
   * One relay and one mail sender per lane (per shard, with {@code idemkit.shards.*}), each on its
   * lane's pool: a shard's events are sent, and its mails delivered, from that shard. The relay
   * sends with its lane bound, so the embedded transport's consumers apply each event on the shard
   * of its tenant.
   */
  @Bean
  public Workers eventWorkers(
      Lanes lanes,
      Consumers consumers,
      RelayTransport transport,
      EventsProperties events,
      MailProperties mail,
      ObjectProvider<MailEndpoint> localMail,
      OutboxMetrics metrics) {
    MailEndpoint local = localMail.getIfAvailable();
    Supplier<String> mailUrl = local == null ? mail::url : local::baseUrl;
    MailClient mailClient = new MailClient(mailUrl, mail.timeout());
    List<OutboxRelay> relays = new ArrayList<>();
    List<DeliverySender> senders = new ArrayList<>();
    for (String lane : lanes.names()) {
      DataSource pool = lanes.pool(lane);
      relays.add(
          OutboxRelay.builder(pool, lanes.bound(lane, transport.transport()))
              .threads(events.relayThreads())
              .batchSize(events.batchSize())
              .aggregateWindow(transport.aggregateWindow())
              .pollInterval(events.pollInterval())
              .maxAttempts(events.maxAttempts())
              .backoff(events.initialBackoff(), events.maxBackoff())
              .listener(metrics)
              .build());
      senders.add(
          DeliverySender.builder(pool, ReceiptsConsumer.CHANNEL, mailClient)
              .maxAttempts(events.deliveryMaxAttempts())
              .backoff(events.initialBackoff(), events.maxBackoff())
              .pollInterval(events.pollInterval())
              // Delivered mails' rows (their keys) are deleted after this, by the sender's thread;
              // refused if shorter than the receipts inbox's retention (docs/events.md).
              .deliveredRetention(events.deliveryRetention())
              .recordedBy(consumers.byName().get(ReceiptsConsumer.NAME))
              .listener(metrics)
              .build());
    }
    return new Workers(relays, senders);
  }

  /**
   * The relays and the mail senders, started once the service is up and stopped before it ends.
   * Their threads also delete what is past its retention: sent events, delivered mails.
   */
  public static final class Workers implements SmartLifecycle {
    private final List<OutboxRelay> relays;
    private final List<DeliverySender> senders;
    private volatile boolean running;

    Workers(List<OutboxRelay> relays, List<DeliverySender> senders) {
      this.relays = List.copyOf(relays);
      this.senders = List.copyOf(senders);
    }

    @Override
    public void start() {
      relays.forEach(OutboxRelay::start);
      senders.forEach(DeliverySender::start);
      running = true;
    }

    @Override
    public void stop() {
      relays.forEach(OutboxRelay::close);
      senders.forEach(DeliverySender::close);
      running = false;
    }

    @Override
    public boolean isRunning() {
      return running;
    }
  }
}
