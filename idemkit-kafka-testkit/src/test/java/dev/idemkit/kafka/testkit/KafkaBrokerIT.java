package dev.idemkit.kafka.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class KafkaBrokerIT {

  @Test
  void aRealBrokerTakesRecordsAndAKilledOneLeavesNothingBehind() throws Exception {
    KafkaBroker broker = KafkaBroker.start();
    try {
      System.out.println("kafka broker started in " + broker.lastStartTime().toMillis() + " ms");
      broker.createTopic("broker-test", 2);
      send(broker, "broker-test", "one");
      send(broker, "broker-test", "two");
      assertThat(readAll(broker, "broker-test", 2)).containsExactlyInAnyOrder("one", "two");
      assertThat(broker.log()).contains(KafkaBrokerMain.READY_PREFIX + broker.bootstrapServers());
    } finally {
      broker.kill();
      assertThat(broker.isRunning()).isFalse();
      broker.close();
    }
    assertThat(broker.log()).isEmpty(); // its directory is gone
  }

  // Stopping and restarting on the same ports and data: KafkaBrokerFaultIT in idemkit-kafka.

  private static void send(KafkaBroker broker, String topic, String value) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      producer.send(new ProducerRecord<>(topic, value, value)).get();
    }
  }

  private static List<String> readAll(KafkaBroker broker, String topic, int expected) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "broker-it");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (values.size() < expected && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          values.add(r.value());
        }
      }
    }
    return values;
  }
}
