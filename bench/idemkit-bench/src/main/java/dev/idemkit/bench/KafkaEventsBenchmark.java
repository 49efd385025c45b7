package dev.idemkit.bench;

import dev.idemkit.jdbc.IdemkitDatabase;
import dev.idemkit.kafka.KafkaConsumerListener;
import dev.idemkit.kafka.KafkaEventConsumer;
import dev.idemkit.kafka.KafkaSchema;
import dev.idemkit.kafka.KafkaTransport;
import dev.idemkit.kafka.TopicNaming;
import dev.idemkit.kafka.testkit.KafkaBroker;
import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.NewEvent;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.outbox.OutboxRelay;
import dev.idemkit.outbox.OutboxSchema;
import dev.idemkit.outbox.spi.EventTransport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Events through Kafka: from the commit of the transaction that appends an event to the commit of
 * the consumer's inbox transaction (with the ledger-like handler doing a real insert), through the
 * outbox relay, a real single-node broker (started here as a child JVM) and a consumer group; and,
 * in the same run, a bare Kafka producer sending the same payloads with the same settings
 * (idempotent, {@code acks=all}, same linger, key and headers) as the baseline.
 *
 * <p>Phases: the bare producer (after a warm-up); the relay alone draining a committed backlog of
 * the same size to the broker; the pipeline at full speed (writers flat out, events/s = events /
 * (last inbox commit - first append commit)); the pipeline paced at half that rate, for the
 * commit-to-inbox latency percentiles.
 *
 * <p>Arguments: {@code --events N} per full-speed phase (default 20000), {@code --aggregates N}
 * (default 2000), {@code --writers N} (default 4), {@code --per-tx N} events per appending
 * transaction (default 1, like a payment's completion), {@code --relay-threads N} (default 2),
 * {@code --paced-seconds N} (default 10), {@code --relay-batch N} events per relay round (default
 * 500), {@code --aggregate-window N} unsent events of one aggregate per round (default 8, as the
 * payments service on Kafka; 1 is the relay's default). The last line is {@code RESULT
 * kafka_events_per_s=<n> relay_vs_producer=<ratio> p99_ms=<n>}: the end-to-end rate at full speed;
 * the relay's own rate (draining a committed backlog to the broker) over the bare producer's; the
 * p99 commit-to-inbox latency at half the end-to-end rate. {@code IDEMKIT_JDBC_URL} picks a
 * PostgreSQL server; by default an embedded one in a fresh temporary directory.
 */
public final class KafkaEventsBenchmark {

  private final DataSource ds;
  private final String bootstrap;
  private final int aggregates;
  private final int writers;
  private final int perTx;
  private final int relayThreads;
  private int relayBatch = 500;
  private int aggregateWindow = 8;
  private String drainDetail = "";
  private final Map<UUID, Long> committedAt = new ConcurrentHashMap<>();

  private KafkaEventsBenchmark(
      DataSource ds, String bootstrap, int aggregates, int writers, int perTx, int relayThreads) {
    this.ds = ds;
    this.bootstrap = bootstrap;
    this.aggregates = aggregates;
    this.writers = writers;
    this.perTx = perTx;
    this.relayThreads = relayThreads;
  }

  public static void main(String[] args) throws Exception {
    int events = intArg(args, "--events", 20000);
    int aggregates = intArg(args, "--aggregates", 2000);
    int writers = intArg(args, "--writers", 4);
    int perTx = intArg(args, "--per-tx", 1);
    int relayThreads = intArg(args, "--relay-threads", 2);
    int pacedSeconds = intArg(args, "--paced-seconds", 10);
    int relayBatch = intArg(args, "--relay-batch", 500);
    int aggregateWindow = intArg(args, "--aggregate-window", 8);

    System.out.println("bench/events --kafka: starting PostgreSQL and a Kafka broker ...");
    String url = System.getenv("IDEMKIT_JDBC_URL");
    Path pgDir = Files.createTempDirectory("idemkit-bench-kafka-pg");
    try (IdemkitDatabase db =
            url == null || url.isBlank()
                ? IdemkitDatabase.embedded(pgDir, 40)
                : IdemkitDatabase.fromEnvironment(40);
        KafkaBroker broker = KafkaBroker.start(4, List.of("-Xmx1g"))) {
      System.out.printf(
          "relay: %d threads, rounds of up to %d events, up to %d per aggregate%n",
          relayThreads, relayBatch, aggregateWindow);
      System.out.printf(
          "broker up in %d ms at %s%n",
          broker.lastStartTime().toMillis(), broker.bootstrapServers());
      OutboxSchema.migrate(db.dataSource());
      KafkaSchema.migrate(db.dataSource());
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.execute(
            "create table if not exists bench_ledger (event_id uuid primary key,"
                + " aggregate_id text not null, payload text not null)");
      }
      KafkaEventsBenchmark bench =
          new KafkaEventsBenchmark(
              db.dataSource(), broker.bootstrapServers(), aggregates, writers, perTx, relayThreads);
      bench.relayBatch = relayBatch;
      bench.aggregateWindow = aggregateWindow;
      for (String topic : List.of("bench.bare", "bench.warm.payment", "bench.peak.payment")) {
        broker.createTopic(topic, 4);
      }
      broker.createTopic("bench.paced.payment", 4);
      broker.createTopic("bench.drain.payment", 4);

      double producerRate = bench.bareProducer(events);
      bench.pipeline("bench.warm.", Math.min(events, 4000), 0, null); // warm-up, not reported
      double drainRate = bench.relayDrain("bench.drain.", events);
      Run peak = bench.pipeline("bench.peak.", events, 0, null);
      double halfRate = peak.eventsPerSecond() / 2;
      Run paced =
          bench.pipeline(
              "bench.paced.", (int) Math.max(500, halfRate * pacedSeconds), halfRate, null);

      double ratio = drainRate / producerRate;
      System.out.printf(
          "bare producer: %.0f records/s (%d records, same payloads, headers and settings)%n",
          producerRate, events);
      System.out.printf(
          "relay alone, draining %d committed events to the broker (picked, sent, acknowledged,"
              + " marked): %.0f events/s = %.2f x the bare producer; %s%n",
          events, drainRate, ratio, bench.drainDetail);
      System.out.printf(
          "relay -> broker -> consumer inbox, full speed: %.0f events/s; latency p50 %.0f ms,"
              + " p99 %.0f ms (backlog builds at full speed)%n",
          peak.eventsPerSecond(), peak.p50Ms(), peak.p99Ms());
      System.out.printf(
          "at half that rate (%.0f events/s offered, %.0f delivered): latency p50 %.0f ms, p99 %.0f"
              + " ms, max %.0f ms%n",
          halfRate, paced.eventsPerSecond(), paced.p50Ms(), paced.p99Ms(), paced.maxMs());
      System.out.printf(
          "end to end at full speed = %.2f x the bare producer (bounded by the writers: one"
              + " transaction per event)%n",
          peak.eventsPerSecond() / producerRate);
      System.out.printf(
          "where the time goes (full speed): writers alone committed %.0f events/s; relay rounds"
              + " carried %.1f events each on average (%d rounds); the consumer applied %.1f"
              + " messages per inbox transaction (%d transactions); %d held for a moment (full"
              + " speed), %d (half rate)%n",
          peak.appendRate(),
          peak.relayRounds() == 0 ? 0.0 : (double) peak.events() / peak.relayRounds(),
          peak.relayRounds(),
          peak.inboxTransactions() == 0 ? 0.0 : (double) peak.events() / peak.inboxTransactions(),
          peak.inboxTransactions(),
          peak.held(),
          paced.held());
      System.out.printf(
          "RESULT kafka_events_per_s=%.0f relay_vs_producer=%.2f p99_ms=%.0f%n",
          peak.eventsPerSecond(), ratio, paced.p99Ms());
    } finally {
      try (Stream<Path> paths = Files.walk(pgDir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Sends {@code n} records like the relay's (same key, headers, payload and settings). */
  private double bareProducer(int n) throws Exception {
    var props = KafkaTransport.builder(bootstrap).producerProperties();
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      sendAll(producer, Math.min(n, 5000)); // warm-up
      long start = System.nanoTime();
      sendAll(producer, n);
      return n / ((System.nanoTime() - start) / 1e9);
    }
  }

  private void sendAll(KafkaProducer<String, String> producer, int n) throws Exception {
    CountDownLatch acked = new CountDownLatch(n);
    AtomicLong failed = new AtomicLong();
    for (int i = 0; i < n; i++) {
      EventEnvelope e =
          new EventEnvelope(
              UUID.randomUUID(),
              "PaymentCompleted",
              "tenant_bench",
              "payment",
              "pay_" + ThreadLocalRandom.current().nextInt(aggregates),
              1,
              Instant.now(),
              payload(i));
      producer.send(
          KafkaTransport.record("bench.bare", e),
          (m, error) -> {
            if (error != null) {
              failed.incrementAndGet();
            }
            acked.countDown();
          });
    }
    if (!acked.await(5, TimeUnit.MINUTES) || failed.get() > 0) {
      throw new IllegalStateException("bare producer: " + failed.get() + " failed sends");
    }
  }

  /**
   * The relay alone: {@code n} events committed first (no relay running), then the relay started;
   * events per second from its start until the broker acknowledged the last one and it was marked.
   */
  private double relayDrain(String prefix, int n) throws Exception {
    append(prefix, n, 0);
    committedAt.clear();
    LongAdder sent = new LongAdder();
    LongAdder rounds = new LongAdder();
    LongAdder inTransport = new LongAdder();
    CountDownLatch allSent = new CountDownLatch(1);
    AtomicLong lastSentAt = new AtomicLong();
    OutboxListener meter =
        new OutboxListener() {
          @Override
          public void published(int count) {
            rounds.increment();
            sent.add(count);
            lastSentAt.set(System.nanoTime());
            if (sent.sum() >= n) {
              allSent.countDown();
            }
          }
        };
    try (KafkaTransport transport =
        KafkaTransport.builder(bootstrap).topics(TopicNaming.prefixed(prefix)).build()) {
      // Like the bare producer's warm-up: the producer has its metadata and connections first.
      transport
          .send(
              List.of(
                  new EventEnvelope(
                      UUID.randomUUID(),
                      "Warmup",
                      "tenant_bench",
                      "payment",
                      "warm-up",
                      1,
                      Instant.now(),
                      "{}")))
          .get(0)
          .toCompletableFuture()
          .get(30, TimeUnit.SECONDS);
      // Time from each round's send to its last acknowledgement: the broker's part of a round.
      EventTransport timed =
          new EventTransport() {
            @Override
            public List<CompletionStage<Void>> send(List<EventEnvelope> events) {
              long sentAt = System.nanoTime();
              List<CompletionStage<Void>> acks = transport.send(events);
              CompletableFuture.allOf(
                      acks.stream()
                          .map(CompletionStage::toCompletableFuture)
                          .toArray(CompletableFuture[]::new))
                  .whenComplete((v, e) -> inTransport.add(System.nanoTime() - sentAt));
              return acks;
            }

            @Override
            public Duration redeliveryHorizon() {
              return transport.redeliveryHorizon();
            }
          };
      long start = System.nanoTime();
      try (OutboxRelay relay =
          OutboxRelay.builder(ds, timed)
              .batchSize(relayBatch)
              .aggregateWindow(aggregateWindow)
              .threads(relayThreads)
              .pollInterval(Duration.ofMillis(5))
              .listener(meter)
              .build()
              .start()) {
        if (!allSent.await(10, TimeUnit.MINUTES)) {
          throw new IllegalStateException(prefix + ": only " + sent.sum() + " of " + n + " sent");
        }
      }
      double seconds = (lastSentAt.get() - start) / 1e9;
      drainDetail =
          String.format(
              "%d rounds of %.0f events on average; send to last acknowledgement took %.0f%% of"
                  + " the relay threads' time, picking, marking and committing the rest",
              rounds.sum(),
              (double) n / Math.max(1, rounds.sum()),
              100.0 * inTransport.sum() / 1e9 / (seconds * relayThreads));
      return n / seconds;
    }
  }

  record Run(
      int events,
      double eventsPerSecond,
      double appendRate,
      double p50Ms,
      double p99Ms,
      double maxMs,
      long relayRounds,
      long inboxTransactions,
      long held) {}

  /**
   * Appends {@code n} events (at {@code rate} per second, or flat out if 0) on a fresh topic
   * prefix, with a relay and a consumer running; returns when the consumer applied them all.
   */
  private Run pipeline(String prefix, int n, double rate, Void unused) throws Exception {
    String consumerName = prefix + "ledger";
    LongAdder relayRounds = new LongAdder();
    LongAdder inboxTransactions = new LongAdder();
    LongAdder held = new LongAdder();
    long[] latenciesNanos = new long[n];
    AtomicLong applied = new AtomicLong();
    AtomicLong lastAppliedAt = new AtomicLong();
    CountDownLatch allApplied = new CountDownLatch(1);
    committedAt.clear();

    KafkaConsumerListener measure =
        new KafkaConsumerListener() {
          @Override
          public void applied(String consumer, List<EventEnvelope> messages) {
            long now = System.nanoTime();
            inboxTransactions.increment();
            for (EventEnvelope m : messages) {
              Long at = committedAt.get(m.eventId());
              long k = applied.getAndIncrement();
              if (k < latenciesNanos.length && at != null) {
                latenciesNanos[(int) k] = now - at;
              }
            }
            lastAppliedAt.set(now);
            if (applied.get() >= n) {
              allApplied.countDown();
            }
          }
        };
    OutboxListener relayMeter =
        new OutboxListener() {
          @Override
          public void published(int count) {
            relayRounds.increment();
          }
        };
    OutboxListener inboxMeter =
        new OutboxListener() {
          @Override
          public void messagesHeld(String consumer, int count) {
            held.add(count);
          }
        };
    TopicNaming topics = TopicNaming.prefixed(prefix);
    try (KafkaTransport transport = KafkaTransport.builder(bootstrap).topics(topics).build();
        OutboxRelay relay =
            OutboxRelay.builder(ds, transport)
                .batchSize(relayBatch)
                .aggregateWindow(aggregateWindow)
                .threads(relayThreads)
                .pollInterval(Duration.ofMillis(5))
                .listener(relayMeter)
                .build()
                .start();
        KafkaEventConsumer consumer =
            KafkaEventConsumer.builder(
                    bootstrap,
                    consumerName,
                    ds,
                    (tx, m) -> {
                      try (PreparedStatement s =
                          tx.prepareStatement(
                              "insert into bench_ledger (event_id, aggregate_id, payload)"
                                  + " values (?, ?, ?)")) {
                        s.setObject(1, m.eventId());
                        s.setString(2, m.aggregateId());
                        s.setString(3, m.payload());
                        s.executeUpdate();
                      }
                    })
                .aggregateTypes("payment")
                .topics(topics)
                .pollTimeout(Duration.ofMillis(20))
                .kafkaListener(measure)
                .listener(inboxMeter)
                .build()
                .start()) {
      long start = System.nanoTime();
      long appendNanos = append(prefix, n, rate);
      if (!allApplied.await(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException(
            prefix + ": only " + applied.get() + " of " + n + " applied");
      }
      double seconds = (lastAppliedAt.get() - start) / 1e9;
      long[] sorted = Arrays.copyOf(latenciesNanos, (int) Math.min(n, applied.get()));
      Arrays.sort(sorted);
      return new Run(
          n,
          n / seconds,
          n / (appendNanos / 1e9),
          percentileMs(sorted, 0.50),
          percentileMs(sorted, 0.99),
          sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e6,
          relayRounds.sum(),
          inboxTransactions.sum(),
          held.sum());
    }
  }

  /** The writers: {@code n} events, {@code perTx} per transaction; answers the nanos it took. */
  private long append(String prefix, int n, double rate) throws Exception {
    Outbox outbox = Outbox.create(ds);
    AtomicLong next = new AtomicLong();
    long start = System.nanoTime();
    List<Thread> threads = new ArrayList<>();
    List<Exception> failures = new ArrayList<>();
    String run = prefix + UUID.randomUUID();
    for (int w = 0; w < writers; w++) {
      Thread t =
          new Thread(
              () -> {
                try (Connection c = ds.getConnection()) {
                  c.setAutoCommit(false);
                  while (true) {
                    long first = next.getAndAdd(perTx);
                    if (first >= n) {
                      return;
                    }
                    if (rate > 0) {
                      long due = start + (long) (first / rate * 1e9);
                      long wait = due - System.nanoTime();
                      if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                      }
                    }
                    List<UUID> ids = new ArrayList<>();
                    Set<String> used = new HashSet<>();
                    for (long i = first; i < Math.min(n, first + perTx); i++) {
                      String aggregate;
                      do {
                        // Aggregates of this phase only: a fresh consumer expects sequence 1.
                        aggregate = prefix + ThreadLocalRandom.current().nextInt(aggregates);
                      } while (!used.add(aggregate));
                      ids.add(
                          outbox
                              .append(
                                  c,
                                  new NewEvent(
                                      "PaymentCompleted",
                                      "tenant_bench",
                                      "payment",
                                      aggregate,
                                      run + "/" + i,
                                      payload(i)))
                              .event()
                              .eventId());
                    }
                    c.commit();
                    long now = System.nanoTime();
                    for (UUID id : ids) {
                      committedAt.put(id, now);
                    }
                  }
                } catch (Exception e) {
                  synchronized (failures) {
                    failures.add(e);
                  }
                }
              },
              "writer-" + w);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (!failures.isEmpty()) {
      throw failures.get(0);
    }
    return System.nanoTime() - start;
  }

  private static String payload(long i) {
    return "{\"paymentId\":\"pay_"
        + i
        + "\",\"accountId\":\"acc_1\",\"amount\":\"10.00\",\"currency\":\"EUR\","
        + "\"providerChargeId\":\"ch_"
        + i
        + "\"}";
  }

  private static double percentileMs(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    return sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] / 1e6;
  }

  private static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
