package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.Fingerprint;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationResult;
import dev.idemkit.Outcome;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * With a bounded claim wait, at most two requests per key and instance are in the key's claim (the
 * first, and one waiting on it); the others are busy at once. Retries of a key whose request has
 * finished must still get its answer, not "in progress", however many arrive together. (The claim
 * wait bounds the claim of a claim-first operation, {@code LocalOperation.claimingFirst}; an
 * operation that writes its record last holds no claim while it runs.)
 */
class ConcurrentRetriesOfAFinishedKeyIT {

  private static final int RETRIES = 16;

  @Test
  void retriesReleasedTogetherAllReplayTheFinishedAnswer() throws Exception {
    DataSource dataSource = TestDatabase.embedded().dataSource();
    Idempotency idempotency =
        Idempotency.create(
            PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource))
                .claimWait(Duration.ofSeconds(2))
                .build());
    IdempotentRequest request =
        new IdempotentRequest(
            ScopedKey.of("tenant-retries", "create_probe", UUID.randomUUID().toString()),
            Fingerprint.of(Map.of("amount", "10.00")),
            Duration.ofHours(1));
    AtomicInteger runs = new AtomicInteger();
    LocalOperation operation =
        LocalOperation.claimingFirst(
            ctx -> {
              runs.incrementAndGet();
              return OperationResult.success(
                  StoredResponse.of(201, Map.of(), "{\"id\":1}".getBytes(StandardCharsets.UTF_8)));
            });
    assertThat(idempotency.execute(request, operation)).isInstanceOf(Outcome.Executed.class);

    ExecutorService pool = Executors.newFixedThreadPool(RETRIES);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Outcome>> answers = new ArrayList<>();
    for (int i = 0; i < RETRIES; i++) {
      answers.add(
          pool.submit(
              () -> {
                go.await();
                return idempotency.execute(request, operation);
              }));
    }
    go.countDown();
    List<Outcome> outcomes = new ArrayList<>();
    for (Future<Outcome> answer : answers) {
      outcomes.add(answer.get());
    }
    pool.shutdown();

    assertThat(outcomes).allSatisfy(o -> assertThat(o).isInstanceOf(Outcome.Replayed.class));
    assertThat(runs).hasValue(1);
  }

  /**
   * A double submit: two requests of one key released together on one instance. The second must
   * wait on the first's claim and get its answer (a replay, or the mismatch for another command),
   * never "in progress" just because it arrived while the first was still inserting its claim.
   */
  @Test
  void theSecondOfTwoRequestsReleasedTogetherWaitsForTheFirstsAnswer() throws Exception {
    DataSource dataSource = TestDatabase.embedded().dataSource();
    Idempotency idempotency =
        Idempotency.create(
            PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource))
                .claimWait(Duration.ofSeconds(2))
                .build());
    AtomicInteger runs = new AtomicInteger();
    LocalOperation slow =
        LocalOperation.claimingFirst(
            ctx -> {
              runs.incrementAndGet();
              Thread.sleep(50);
              return OperationResult.success(StoredResponse.of(201, Map.of(), new byte[] {1}));
            });
    ExecutorService pool = Executors.newFixedThreadPool(2);
    List<String> answers = new ArrayList<>();
    for (int round = 0; round < 20; round++) {
      ScopedKey id = ScopedKey.of("tenant-double", "create_probe", UUID.randomUUID().toString());
      boolean sameCommand = round % 2 == 0;
      CountDownLatch ready = new CountDownLatch(2);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Outcome>> pair = new ArrayList<>();
      for (String amount : List.of("10.00", sameCommand ? "10.00" : "99.00")) {
        IdempotentRequest request =
            new IdempotentRequest(
                id, Fingerprint.of(Map.of("amount", amount)), Duration.ofHours(1));
        pair.add(
            pool.submit(
                () -> {
                  ready.countDown();
                  go.await();
                  return idempotency.execute(request, slow);
                }));
      }
      ready.await();
      go.countDown();
      List<String> kinds = new ArrayList<>();
      for (Future<Outcome> f : pair) {
        kinds.add(f.get().getClass().getSimpleName());
      }
      kinds.sort(null);
      answers.add(String.join("+", kinds));
    }
    pool.shutdown();

    for (int round = 0; round < 20; round++) {
      assertThat(answers.get(round))
          .as("round %d", round)
          .isEqualTo(round % 2 == 0 ? "Executed+Replayed" : "Executed+Mismatch");
    }
    assertThat(runs).hasValue(20);
  }

  @Test
  void aRetryBusyOnAnUncommittedClaimIsToldHowLongTheOperationUsuallyTakes() throws Exception {
    DataSource dataSource = TestDatabase.embedded().dataSource();
    Idempotency idempotency =
        Idempotency.create(
            PostgresIdempotencyStore.builder(JdbcTransactions.of(dataSource))
                .claimWait(Duration.ofMillis(200))
                .build());
    AtomicInteger retryRuns = new AtomicInteger();
    LocalOperation counted =
        LocalOperation.claimingFirst(
            ctx -> {
              retryRuns.incrementAndGet();
              return OperationResult.success(StoredResponse.of(201, Map.of(), new byte[0]));
            });
    // One earlier run of the operation took a little over 2 s.
    LocalOperation twoSeconds =
        ctx -> {
          Thread.sleep(2_100);
          return OperationResult.success(StoredResponse.of(201, Map.of(), new byte[0]));
        };
    assertThat(idempotency.execute(request("earlier"), twoSeconds))
        .isInstanceOf(Outcome.Executed.class);

    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    LocalOperation holding =
        LocalOperation.claimingFirst(
            ctx -> {
              held.countDown();
              letGo.await();
              return OperationResult.success(StoredResponse.of(201, Map.of(), new byte[0]));
            });
    IdempotentRequest now = request("now");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<Outcome> first = pool.submit(() -> idempotency.execute(now, holding));
    held.await();
    Outcome retry = idempotency.execute(now, counted);
    letGo.countDown();

    assertThat(first.get()).isInstanceOf(Outcome.Executed.class);
    assertThat(retry)
        .isInstanceOfSatisfying(
            Outcome.InProgress.class,
            busy -> assertThat(busy.retryAfter()).isEqualTo(Duration.ofSeconds(3)));
    assertThat(retryRuns).as("the busy retry ran nothing").hasValue(0);
    pool.shutdown();
  }

  private static IdempotentRequest request(String key) {
    return new IdempotentRequest(
        ScopedKey.of("tenant-busy", "create_slow", key + "-" + UUID.randomUUID()),
        Fingerprint.of(Map.of("amount", "10.00")),
        Duration.ofHours(1));
  }
}
