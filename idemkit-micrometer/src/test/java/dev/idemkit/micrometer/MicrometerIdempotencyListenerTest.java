package dev.idemkit.micrometer;

import static dev.idemkit.micrometer.IdempotencyMetricNames.CONFLICT_DIFFERENT_REQUEST_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.EXPIRED_RETRY_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.FAILURE_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.LOST_OWNERSHIP_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.REPLAY_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.REQUESTS;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_KIND;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_OPERATION;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_OUTCOME;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_STATE;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAKEOVER_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.UNKNOWN_STATE_COUNT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.CallResult;
import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationFailedException;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.Step;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.Takeover;
import dev.idemkit.testing.InMemoryIdempotencyStore;
import dev.idemkit.testing.MutableClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Drives a real engine on the in-memory store and reads the meters it leaves behind. */
class MicrometerIdempotencyListenerTest {

  private static final String TENANT = "tenant-secret-42";
  private static final String OPERATION = "create_payment";
  private static final Duration TTL = Duration.ofHours(1);

  private MutableClock clock;
  private SimpleMeterRegistry registry;
  private MicrometerIdempotencyListener listener;
  private Idempotency idempotency;

  @BeforeEach
  void setUp() {
    clock = new MutableClock(Instant.parse("2026-01-15T10:00:00Z"));
    registry = new SimpleMeterRegistry();
    listener = MicrometerIdempotencyListener.create(registry);
    idempotency =
        Idempotency.create(
            new InMemoryIdempotencyStore(clock),
            IdempotencyConfig.builder().defaultTtl(TTL).listener(listener).build());
  }

  @Test
  void cleanupRowsEscalationsAndRefusedKeysAreCounted() {
    MicrometerIdempotencyListener life = MicrometerIdempotencyListener.create(registry);
    ScopedKey id = key("key-life");

    life.onCleanup(1000, 0);
    life.onCleanup(3, 7);
    life.onEscalated(id);
    life.onQuotaExceeded(id, "new_keys");
    life.onQuotaExceeded(id, "new_keys");

    assertThat(
            registry.get(IdempotencyMetricNames.CLEANUP_ROWS).tag("kind", "body").counter().count())
        .isEqualTo(1003);
    assertThat(
            registry
                .get(IdempotencyMetricNames.CLEANUP_ROWS)
                .tag("kind", "record")
                .counter()
                .count())
        .isEqualTo(7);
    assertThat(
            registry
                .get(IdempotencyMetricNames.ESCALATED_COUNT)
                .tag(TAG_OPERATION, id.operation())
                .counter()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get(IdempotencyMetricNames.QUOTA_EXCEEDED_COUNT)
                .tag("quota", "new_keys")
                .counter()
                .count())
        .isEqualTo(2);
  }

  @Test
  void anExecutedRequestIsTimedByOperationAndOutcome() {
    Outcome outcome = idempotency.execute(key("key-executed"), command("10.00"), pay());

    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    assertThat(requests("executed")).isEqualTo(1);
    assertThat(counter(REPLAY_COUNT)).isZero();
    assertThat(counter(CONFLICT_DIFFERENT_REQUEST_COUNT)).isZero();
    assertThat(counter(IdempotencyMetricNames.ESCALATED_COUNT))
        .as("there at 0 from the operation's first request, so an alert on its rate has data")
        .isZero();
  }

  @Test
  void aReplayIsCountedAndTimedAsReplayed() {
    ScopedKey id = key("key-replayed");
    idempotency.execute(id, command("10.00"), pay());

    Outcome first = idempotency.execute(id, command("10.00"), pay());
    Outcome second = idempotency.execute(id, command("10.00"), pay());

    assertThat(first).isInstanceOf(Outcome.Replayed.class);
    assertThat(second).isInstanceOf(Outcome.Replayed.class);
    assertThat(counter(REPLAY_COUNT)).isEqualTo(2);
    assertThat(requests("replayed")).isEqualTo(2);
    assertThat(requests("executed")).isEqualTo(1);
  }

  @Test
  void aKeyReusedForADifferentCommandIsCountedAsAConflict() {
    ScopedKey id = key("key-mismatch");
    idempotency.execute(id, command("10.00"), pay());

    Outcome outcome = idempotency.execute(id, command("99.00"), pay());

    assertThat(outcome).isInstanceOf(Outcome.Mismatch.class);
    assertThat(counter(CONFLICT_DIFFERENT_REQUEST_COUNT)).isEqualTo(1);
    assertThat(requests("mismatch")).isEqualTo(1);
    assertThat(counter(REPLAY_COUNT)).isZero();
  }

  @Test
  void aRetryAfterTheWindowIsCountedAsExpiredAndAsATakeover() {
    ScopedKey id = key("key-expired");
    idempotency.execute(id, command("10.00"), pay());
    clock.advance(TTL.plusSeconds(1));

    Outcome outcome = idempotency.execute(id, command("10.00"), pay());

    assertThat(outcome).isInstanceOf(Outcome.Executed.class);
    assertThat(counter(EXPIRED_RETRY_COUNT)).isEqualTo(1);
    assertThat(takeovers(Takeover.REPLACE_EXPIRED)).isEqualTo(1);
    assertThat(requests("executed")).isEqualTo(2);
  }

  @Test
  void anExternalCallWhoseAnswerWasLostIsCountedAsUnknownAndTimedAsPending() {
    ScopedKey id = key("key-unknown");
    PhasedOperation<Map<String, String>> op =
        PhasedOperation.builder()
            .local(
                "LOCAL_PAYMENT_CREATED",
                (ctx, d) -> {
                  d.put("paymentId", "p-1");
                  return Step.next(d);
                })
            .external(
                "PROVIDER_CONFIRMED",
                call ->
                    call.call(
                            (ctx, d) -> {
                              throw new IOException("charged, then the connection dropped");
                            })
                        .lookup((ctx, d) -> CallResult.unknown("provider unreachable")))
            .complete((ctx, d) -> OperationResult.success(response("{}")));

    Outcome outcome = idempotency.execute(id, command("10.00"), op);

    assertThat(outcome).isInstanceOf(Outcome.OutcomePending.class);
    assertThat(counter(UNKNOWN_STATE_COUNT)).isEqualTo(1);
    assertThat(requests("outcome_pending")).isEqualTo(1);
  }

  @Test
  void aRejectionAndAnUnexpectedFailureAreTold() {
    idempotency.execute(
        key("key-rejected"),
        command("10.00"),
        ctx -> OperationResult.rejected(response("{\"declined\":true}")));
    LocalOperation broken =
        ctx -> {
          throw new IllegalStateException("database hiccup");
        };

    assertThatThrownBy(() -> idempotency.execute(key("key-failed"), command("10.00"), broken))
        .isInstanceOf(OperationFailedException.class);

    assertThat(requests("rejected")).isEqualTo(1);
    assertThat(
            registry
                .get(FAILURE_COUNT)
                .tags(TAG_OPERATION, OPERATION, TAG_STATE, "failed_retryable")
                .counter()
                .count())
        .isEqualTo(1);
  }

  @Test
  void lostOwnershipAndEveryTakeoverKindHaveTheirCounters() {
    ScopedKey id = key("key-direct");
    listener.onLostOwnership(id);
    for (Takeover kind : Takeover.values()) {
      listener.onTakeover(id, kind);
    }

    assertThat(counter(LOST_OWNERSHIP_COUNT)).isEqualTo(1);
    assertThat(registry.get(TAKEOVER_COUNT).counters())
        .extracting(c -> c.getId().getTag(TAG_KIND))
        .containsExactlyInAnyOrder(
            "replace_expired", "reclaim_retryable", "resume_abandoned", "recover_unknown");
  }

  @Test
  void metersAreKeptApartByOperation() {
    idempotency.execute(key("key-a"), command("10.00"), pay());
    idempotency.execute(ScopedKey.of(TENANT, "refund_payment", "key-a"), command("10.00"), pay());

    assertThat(registry.get(REQUESTS).tag(TAG_OPERATION, OPERATION).timer().count()).isEqualTo(1);
    assertThat(registry.get(REQUESTS).tag(TAG_OPERATION, "refund_payment").timer().count())
        .isEqualTo(1);
  }

  @Test
  void noMeterCarriesATenantOrAKey() {
    ScopedKey id = key("key-private-7f3a");
    idempotency.execute(id, command("10.00"), pay());
    idempotency.execute(id, command("10.00"), pay());
    idempotency.execute(id, command("99.00"), pay());
    clock.advance(TTL.plusSeconds(1));
    idempotency.execute(id, command("10.00"), pay());
    listener.onUnknownState(id);
    listener.onLostOwnership(id);
    listener.onFailure(id, RecordState.IN_PROGRESS, new IllegalStateException(id.toString()));

    Set<String> tagKeys =
        registry.getMeters().stream()
            .flatMap(m -> m.getId().getTags().stream())
            .map(Tag::getKey)
            .collect(Collectors.toSet());
    Set<String> tagValues =
        registry.getMeters().stream()
            .flatMap(m -> m.getId().getTags().stream())
            .map(Tag::getValue)
            .collect(Collectors.toSet());

    assertThat(registry.getMeters()).isNotEmpty();
    assertThat(tagKeys).containsOnly(TAG_OPERATION, TAG_OUTCOME, TAG_KIND, TAG_STATE);
    assertThat(tagKeys).doesNotContain("tenant", "key");
    assertThat(tagValues)
        .allSatisfy(
            value ->
                assertThat(value)
                    .doesNotContain(TENANT)
                    .doesNotContain(id.key().value())
                    .doesNotContain(id.toString()));
    assertThat(registry.getMeters())
        .extracting(Meter::getId)
        .allSatisfy(
            meterId ->
                assertThat(meterId.getName())
                    .doesNotContain(TENANT)
                    .doesNotContain(id.key().value()));
  }

  @Test
  void aCallbackNeverThrowsEvenWhenAMeterCannotBeRegistered() {
    // The timer's name and tags taken by a counter: Micrometer refuses the timer.
    Counter.builder(REQUESTS)
        .tags(TAG_OPERATION, OPERATION, TAG_OUTCOME, "executed")
        .register(registry);
    ScopedKey id = key("key-clash");

    assertThatCode(
            () -> {
              listener.onOutcome(id, new Outcome.Executed(response("{}")), Duration.ofMillis(3));
              listener.onOutcome(id, null, null);
              listener.onTakeover(id, null);
              listener.onFailure(id, null, null);
            })
        .doesNotThrowAnyException();
    assertThat(idempotency.execute(key("key-after-clash"), command("10.00"), pay()))
        .isInstanceOf(Outcome.Executed.class);
  }

  @Test
  void anUnboundListenerRecordsNothingAndABoundOneRecordsIntoEveryRegistry() {
    MicrometerIdempotencyListener unbound = new MicrometerIdempotencyListener();
    ScopedKey id = key("key-binding");
    unbound.onExpiredRetry(id);

    SimpleMeterRegistry first = new SimpleMeterRegistry();
    SimpleMeterRegistry second = new SimpleMeterRegistry();
    unbound.bindTo(first);
    unbound.bindTo(second);
    unbound.bindTo(first);
    unbound.onExpiredRetry(id);

    assertThat(first.get(EXPIRED_RETRY_COUNT).counter().count()).isEqualTo(1);
    assertThat(second.get(EXPIRED_RETRY_COUNT).counter().count()).isEqualTo(1);
  }

  // ---- helpers -----------------------------------------------------------------------------

  private static ScopedKey key(String key) {
    return ScopedKey.of(TENANT, OPERATION, key);
  }

  private static Fingerprint command(String amount) {
    return Fingerprint.of(Map.of("amount", amount, "currency", "EUR"));
  }

  private static StoredResponse response(String body) {
    return StoredResponse.of(
        201, Map.of("Content-Type", "application/json"), body.getBytes(StandardCharsets.UTF_8));
  }

  private static LocalOperation pay() {
    return ctx -> OperationResult.success(response("{\"paymentId\":\"pay_1\"}"));
  }

  private long requests(String outcome) {
    var timer =
        registry.find(REQUESTS).tags(TAG_OPERATION, OPERATION, TAG_OUTCOME, outcome).timer();
    return timer == null ? 0 : timer.count();
  }

  private double counter(String name) {
    return registry.get(name).tag(TAG_OPERATION, OPERATION).counter().count();
  }

  private double takeovers(Takeover kind) {
    return registry
        .get(TAKEOVER_COUNT)
        .tags(TAG_OPERATION, OPERATION, TAG_KIND, kind.name().toLowerCase(java.util.Locale.ROOT))
        .counter()
        .count();
  }
}
