package dev.idemkit.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Real threads: what a poll sees when the worker starts, fails, pauses and stops. */
class PollingWorkerTest {

  @Test
  void pollsAgainUntilStoppedAndStopWaitsForThePollInFlight() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    CountDownLatch thirdPoll = new CountDownLatch(1);
    CountDownLatch stopBlocked = new CountDownLatch(1);
    AtomicReference<Boolean> interruptedInFlight = new AtomicReference<>();
    PollingWorker worker =
        PollingWorker.named("test-worker")
            .poll(
                () -> {
                  if (polls.incrementAndGet() == 3) {
                    thirdPoll.countDown();
                    try {
                      Thread.sleep(60_000); // the stop's interrupt ends this
                    } catch (InterruptedException e) {
                      interruptedInFlight.set(true);
                      Thread.sleep(200); // still in flight: the stop waits for it
                      stopBlocked.countDown();
                    }
                  }
                  return Duration.ZERO;
                })
            .build();

    worker.start();
    worker.start(); // idempotent: still one lane
    assertThat(thirdPoll.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(worker.stop()).isTrue();

    assertThat(stopBlocked.getCount()).as("stop returned after the poll in flight ended").isZero();
    assertThat(interruptedInFlight.get()).isTrue();
    assertThat(polls.get()).isEqualTo(3);
    assertThat(worker.running()).isFalse();
    assertThat(worker.stop()).isTrue(); // idempotent
    Thread.sleep(100);
    assertThat(polls.get()).as("no poll after the stop").isEqualTo(3);
  }

  @Test
  void aPollThatThrowsPausesAsTheFailureHandlerSaysAndTheLaneGoesOn() throws Exception {
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    AtomicInteger polls = new AtomicInteger();
    CountDownLatch recovered = new CountDownLatch(1);
    long[] failedAt = new long[1];
    long[] nextAt = new long[1];
    PollingWorker worker =
        PollingWorker.named("test-failing")
            .poll(
                () -> {
                  int n = polls.incrementAndGet();
                  if (n == 1) {
                    failedAt[0] = System.nanoTime();
                    throw new AssertionError("an Error, not only an exception");
                  }
                  if (n == 2) {
                    nextAt[0] = System.nanoTime();
                    recovered.countDown();
                  }
                  return Duration.ofHours(1);
                })
            .afterFailure(
                e -> {
                  failures.add(e);
                  return Duration.ofMillis(300);
                })
            .build()
            .start();
    try {
      assertThat(recovered.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(failures).singleElement().isInstanceOf(AssertionError.class);
      assertThat(Duration.ofNanos(nextAt[0] - failedAt[0]))
          .isGreaterThanOrEqualTo(Duration.ofMillis(300));
    } finally {
      worker.stop();
    }
    assertThat(polls.get()).as("the hour's pause was dropped by the stop").isEqualTo(2);
  }

  @Test
  void aFailureHandlerThatThrowsDoesNotEndTheLane() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    PollingWorker worker =
        PollingWorker.named("test-handler-fails")
            .poll(
                () -> {
                  if (polls.incrementAndGet() == 1) {
                    throw new IllegalStateException("the poll fails");
                  }
                  return Duration.ofHours(1);
                })
            .afterFailure(
                e -> {
                  throw new IllegalStateException("and so does its handler");
                })
            .build()
            .start();
    try {
      awaitPolls(polls, 2);
      assertThat(polls.get()).as("polled again after the handler's fallback second").isEqualTo(2);
    } finally {
      worker.stop();
    }
  }

  @Test
  void withoutInterruptTheWakeUpEndsThePollAndTheLastStepRunsAfterIt() throws Exception {
    CountDownLatch woken = new CountDownLatch(1);
    CountDownLatch polling = new CountDownLatch(1);
    List<String> steps = new CopyOnWriteArrayList<>();
    AtomicReference<String> lastStepThread = new AtomicReference<>();
    PollingWorker worker =
        PollingWorker.named("test-wakeup")
            .poll(
                () -> {
                  polling.countDown();
                  // Like a Kafka client's poll: only its wake-up ends it, not an interrupt.
                  while (!woken.await(10, TimeUnit.MILLISECONDS)) {
                    Thread.interrupted();
                  }
                  steps.add("poll ended");
                  return Duration.ZERO;
                })
            .interruptOnStop(false)
            .onStop(woken::countDown)
            .whenStopped(
                () -> {
                  steps.add("last step");
                  lastStepThread.set(Thread.currentThread().getName());
                })
            .build()
            .start();
    assertThat(polling.await(10, TimeUnit.SECONDS)).isTrue();

    assertThat(worker.stop()).isTrue();

    assertThat(steps).containsExactly("poll ended", "last step");
    // On the lane's thread, or on the stopping one when the lane had already ended (the executor
    // ends on whichever thread leaves it last): after the poll either way, never beside it.
    assertThat(lastStepThread.get()).isIn("test-wakeup", Thread.currentThread().getName());
  }

  @Test
  void stopWaitsNoLongerThanItsTimeoutForAPollThatDoesNotEnd() throws Exception {
    CountDownLatch polling = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    PollingWorker worker =
        PollingWorker.named("test-stuck")
            .poll(
                () -> {
                  polling.countDown();
                  while (release.getCount() > 0) {
                    try {
                      release.await();
                    } catch (InterruptedException deaf) {
                      // deaf to the stop's interrupt
                    }
                  }
                  return Duration.ZERO;
                })
            .stopTimeout(Duration.ofMillis(200))
            .build()
            .start();
    assertThat(polling.await(10, TimeUnit.SECONDS)).isTrue();
    long started = System.nanoTime();
    try {
      assertThat(worker.stop()).isFalse();
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    } finally {
      release.countDown();
    }
  }

  @Test
  void lanesRunSideBySideAndAStoppedWorkerStartsAgain() throws Exception {
    CountDownLatch together = new CountDownLatch(3);
    CountDownLatch allMet = new CountDownLatch(3);
    PollingWorker worker =
        PollingWorker.named("test-lanes")
            .lanes(
                3,
                lane ->
                    () -> {
                      together.countDown();
                      // Each lane waits for the other two: only lanes on threads of their own meet.
                      if (together.await(10, TimeUnit.SECONDS)) {
                        allMet.countDown();
                      }
                      return Duration.ofHours(1);
                    })
            .build();
    worker.start();
    assertThat(allMet.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(worker.stop()).isTrue();

    AtomicInteger again = new AtomicInteger();
    PollingWorker restarted =
        PollingWorker.named("test-restart")
            .poll(
                () -> {
                  again.incrementAndGet();
                  return Duration.ofHours(1);
                })
            .build();
    restarted.start();
    awaitPolls(again, 1);
    restarted.stop();
    restarted.start();
    awaitPolls(again, 2);
    restarted.stop();
    assertThat(again.get()).isEqualTo(2);
  }

  @Test
  void theFirstPollWaitsTheFirstPauseAndAStopDuringItRunsNoPoll() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    long[] firstAt = new long[1];
    PollingWorker worker =
        PollingWorker.named("test-first-pause")
            .firstPollAfter(Duration.ofMillis(300))
            .poll(
                () -> {
                  if (polls.incrementAndGet() == 1) {
                    firstAt[0] = System.nanoTime();
                  }
                  return Duration.ofHours(1);
                })
            .build();

    long started = System.nanoTime();
    worker.start();
    awaitPolls(polls, 1);
    worker.stop();
    assertThat(polls.get()).isEqualTo(1);
    assertThat(Duration.ofNanos(firstAt[0] - started))
        .isGreaterThanOrEqualTo(Duration.ofMillis(300));

    worker.start();
    assertThat(worker.stop()).isTrue();
    Thread.sleep(400);
    assertThat(polls.get()).as("the stopped run's first poll never ran").isEqualTo(1);
  }

  private static void awaitPolls(AtomicInteger polls, int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (polls.get() < count && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }
}
