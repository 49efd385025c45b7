package dev.idemkit.kafka;

import static dev.idemkit.kafka.Fixture.append;
import static dev.idemkit.kafka.Fixture.await;
import static dev.idemkit.kafka.Fixture.broker;
import static dev.idemkit.kafka.Fixture.count;
import static dev.idemkit.kafka.Fixture.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.OutboxRelay;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;

/**
 * A cluster that takes records slower than the relay sends them: the broker throttles the relay's
 * producer (a client quota of 2 KB/s), so its small buffer ({@code buffer.memory}) stays full past
 * {@code max.block.ms} while the broker answers. That is the cluster's failure: no event counts an
 * attempt or is parked, and everything goes once the throttle is lifted.
 */
class KafkaSlowClusterIT {

  @Test
  void aProducerBufferFullBecauseTheClusterIsSlowCountsNoAttemptAndParksNothing() throws Exception {
    String type = unique("slow");
    String clientId = unique("idemkit-relay-throttled");
    String bootstrap = broker().bootstrapServers();
    broker().createTopic("idemkit.events." + type, 1);
    List<String> aggregates = IntStream.range(0, 60).mapToObj(i -> "s" + i).toList();
    append(type, aggregates, type + "x".repeat(2000)); // 60 events of about 2 KB

    try (Admin admin = broker().admin()) {
      throttle(admin, clientId, 2048.0);
      try (KafkaTransport transport =
              KafkaTransport.builder(bootstrap)
                  .property("client.id", clientId)
                  .property("batch.size", "4096")
                  .property("buffer.memory", "12288")
                  .property("max.block.ms", "300")
                  .build();
          OutboxRelay relay = Fixture.relay(transport).maxAttempts(2).build().start()) {
        String ofThisTest = " from idemkit_outbox where aggregate_type = '" + type + "'";
        await(
            Duration.ofSeconds(60),
            "events failing on the full producer buffer",
            () ->
                count(
                        "select count(*)"
                            + ofThisTest
                            + " and last_error like '%Failed to allocate%'") // Kafka's words
                    >= 5);
        assertThat(count("select count(*)" + ofThisTest + " and attempts > 0")).isZero();
        assertThat(
                count(
                    "select count(*)"
                        + ofThisTest
                        + " and last_error like '%Failed to allocate%' and last_error not like"
                        + " 'transport unavailable: producer buffer full (buffer.memory)%'"))
            .isZero();
        assertThat(count("select count(*)" + ofThisTest + " and parked_at is not null")).isZero();

        throttle(admin, clientId, null);
        await(
            Duration.ofSeconds(90),
            "every event sent once the throttle is lifted",
            () -> count("select count(*)" + ofThisTest + " and sent_at is null") == 0);
        assertThat(count("select count(*)" + ofThisTest + " and parked_at is not null")).isZero();
        assertThat(count("select count(*)" + ofThisTest + " and attempts > 0")).isZero();
      } finally {
        throttle(admin, clientId, null);
      }
    }
  }

  /** Sets (or, with null, removes) a produce byte-rate quota for the client id. */
  private static void throttle(Admin admin, String clientId, Double bytesPerSecond)
      throws Exception {
    Map<String, String> entity = new HashMap<>();
    entity.put(ClientQuotaEntity.CLIENT_ID, clientId);
    admin
        .alterClientQuotas(
            List.of(
                new ClientQuotaAlteration(
                    new ClientQuotaEntity(entity),
                    List.of(new ClientQuotaAlteration.Op("producer_byte_rate", bytesPerSecond)))))
        .all()
        .get();
  }
}
