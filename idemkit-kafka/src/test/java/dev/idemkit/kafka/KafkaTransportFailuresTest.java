package dev.idemkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.spi.TransportUnavailableException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * How the transport names a failure the producer reports once it gave up on a queued record: the
 * cluster's (a {@link TransportUnavailableException}, which the relay retries without counting
 * toward parking) or the event's (which counts). The producer is Kafka's {@link MockProducer},
 * failing records as a real one does after its retries, with the {@code connection-count} metric
 * the transport reads; what the relay does with each kind is proven against PostgreSQL in
 * OutboxRelayIT, and a whole broker's outage against a real one in KafkaBrokerFaultIT.
 */
class KafkaTransportFailuresTest {

  @Test
  void aPartitionThatCannotTakeWritesWhileBrokersAnswerIsTheClustersFailure() {
    for (RuntimeException partial :
        List.of(
            new NotEnoughReplicasException("ISR 1 below min.insync.replicas 2"),
            new NotLeaderOrFollowerException("leader moved"),
            new TimeoutException(
                "Expiring 1 record(s): 20000 ms has passed since batch creation"))) {
      Throwable failure = failureOf(1, partial);
      assertThat(failure)
          .as(partial.getClass().getSimpleName())
          .isInstanceOf(TransportUnavailableException.class)
          .hasCause(partial)
          .hasMessageStartingWith(
              "partition not writable (" + partial.getClass().getSimpleName() + "): ");
    }
  }

  @Test
  void noBrokerReachableIsTheClustersFailure() {
    NetworkException down = new NetworkException("connection refused");
    assertThat(failureOf(0, down))
        .isInstanceOf(TransportUnavailableException.class)
        .hasCause(down)
        .hasMessageStartingWith("no connection to any Kafka broker (127.0.0.1:1): ");
  }

  @Test
  void aRecordTheClusterRefusesOrATopicItDoesNotKnowIsTheEventsFailure() {
    for (RuntimeException own :
        List.of(
            new RecordTooLargeException("too large"),
            new UnknownTopicOrPartitionException("no such topic"))) {
      assertThat(failureOf(1, own)).as(own.getClass().getSimpleName()).isSameAs(own);
      assertThat(failureOf(0, own)).as(own.getClass().getSimpleName()).isSameAs(own);
    }
  }

  /**
   * A record that finds no room in the producer's buffer within {@code max.block.ms} while brokers
   * answer (a slow or throttled cluster): the cluster's failure, not counted against the event, and
   * the batch's later events fail at once instead of each waiting as long again. Kafka 4 reports it
   * through the callback inside {@code send()}; older clients threw it.
   */
  @Test
  void aFullProducerBufferIsTheClustersFailureAndFailsTheRestOfTheBatchAtOnce() {
    for (boolean thrown : List.of(false, true)) {
      AtomicInteger sends = new AtomicInteger();
      BufferExhaustedException full =
          new BufferExhaustedException(
              "Failed to allocate 4196 bytes within the configured max blocking time 500 ms.");
      MockProducer<String, String> producer =
          new MockProducer<>(false, null, new StringSerializer(), new StringSerializer()) {
            @Override
            public synchronized Future<RecordMetadata> send(
                ProducerRecord<String, String> record, Callback callback) {
              sends.incrementAndGet();
              if (thrown) {
                throw full;
              }
              callback.onCompletion(null, full); // on the caller's thread, as KafkaProducer does
              return CompletableFuture.failedFuture(full);
            }
          };
      MetricName name =
          new MetricName("connection-count", "producer-metrics", "", Map.<String, String>of());
      producer.setMockMetrics(name, metric(name, 1));
      KafkaTransport transport =
          new KafkaTransport(producer, KafkaTransport.builder("127.0.0.1:1"));

      List<CompletionStage<Void>> acks =
          transport.send(List.of(event("p1"), event("p2"), event("p3")));

      assertThat(acks)
          .as(thrown ? "thrown" : "reported")
          .allSatisfy(
              ack ->
                  assertThat(failure(ack))
                      .isInstanceOf(TransportUnavailableException.class)
                      .hasCause(full)
                      .hasMessageStartingWith("producer buffer full (buffer.memory)"));
      assertThat(sends).as(thrown ? "thrown" : "reported").hasValue(1);
    }
  }

  private static EventEnvelope event(String aggregateId) {
    return new EventEnvelope(
        UUID.randomUUID(),
        "PaymentCompleted",
        "t1",
        "payment",
        aggregateId,
        1,
        Instant.now(),
        "{}");
  }

  private static Throwable failure(CompletionStage<Void> ack) {
    try {
      ack.toCompletableFuture().join();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("the send succeeded");
  }

  /**
   * Sends one event through a transport whose producer has {@code connections} open, fails the
   * record from another thread (as the producer's I/O thread does) and returns what the event's
   * stage failed with.
   */
  private static Throwable failureOf(int connections, RuntimeException error) {
    MockProducer<String, String> producer =
        new MockProducer<>(false, null, new StringSerializer(), new StringSerializer());
    MetricName name =
        new MetricName("connection-count", "producer-metrics", "", Map.<String, String>of());
    producer.setMockMetrics(name, metric(name, connections));
    KafkaTransport transport = new KafkaTransport(producer, KafkaTransport.builder("127.0.0.1:1"));
    EventEnvelope event =
        new EventEnvelope(
            UUID.randomUUID(), "PaymentCompleted", "t1", "payment", "p1", 1, Instant.now(), "{}");
    List<CompletionStage<Void>> acks = transport.send(List.of(event));
    CompletableFuture.runAsync(() -> producer.errorNext(error)).join();
    try {
      acks.get(0).toCompletableFuture().join();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("the send succeeded");
  }

  private static Metric metric(MetricName name, double value) {
    return new Metric() {
      @Override
      public MetricName metricName() {
        return name;
      }

      @Override
      public Object metricValue() {
        return value;
      }
    };
  }
}
