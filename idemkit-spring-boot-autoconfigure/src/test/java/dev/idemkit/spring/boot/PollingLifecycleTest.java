package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** The starter's workers' lifecycle: first run, pause, a failed run, and the stop. */
@ExtendWith(OutputCaptureExtension.class)
class PollingLifecycleTest {

  @Test
  void runsAfterTheFirstDelayThenEveryIntervalAndAFailedRunIsLoggedAndTriedAgain(
      CapturedOutput output) throws Exception {
    List<Long> runs = new CopyOnWriteArrayList<>();
    CountDownLatch threeRuns = new CountDownLatch(3);
    PollingLifecycle worker =
        new PollingLifecycle("test-lifecycle", Duration.ofMillis(200), Duration.ofMillis(100)) {
          @Override
          void runOnce() {
            runs.add(System.nanoTime());
            threeRuns.countDown();
            if (runs.size() == 1) {
              throw new IllegalStateException("the database is away");
            }
          }

          @Override
          String failedRun() {
            return "Test run failed";
          }
        };

    long started = System.nanoTime();
    worker.start();
    assertThat(worker.isRunning()).isTrue();
    assertThat(threeRuns.await(10, TimeUnit.SECONDS)).isTrue();
    worker.stop();

    assertThat(worker.isRunning()).isFalse();
    assertThat(Duration.ofNanos(runs.get(0) - started))
        .isGreaterThanOrEqualTo(Duration.ofMillis(200));
    assertThat(Duration.ofNanos(runs.get(1) - runs.get(0)))
        .as("the pause after the failed run")
        .isGreaterThanOrEqualTo(Duration.ofMillis(100));
    assertThat(Duration.ofNanos(runs.get(2) - runs.get(1)))
        .isGreaterThanOrEqualTo(Duration.ofMillis(100));
    assertThat(output)
        .contains("Test run failed; the next run tries again")
        .contains("the database is away");
  }

  @Test
  void stopInterruptsARunUnderWayAndWaitsForItToEnd(CapturedOutput output) throws Exception {
    CountDownLatch running = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    AtomicBoolean ended = new AtomicBoolean();
    PollingLifecycle worker =
        new PollingLifecycle("test-lifecycle-stop", Duration.ZERO, Duration.ofHours(1)) {
          @Override
          void runOnce() throws InterruptedException {
            running.countDown();
            try {
              Thread.sleep(60_000);
            } catch (InterruptedException e) {
              interrupted.set(true);
              Thread.sleep(100); // still ending: the stop waits
              ended.set(true);
              throw e;
            }
          }

          @Override
          String failedRun() {
            return "Stopped run failed";
          }
        };

    worker.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    worker.stop();

    assertThat(interrupted).isTrue();
    assertThat(ended).as("stop returned after the run ended").isTrue();
    assertThat(worker.isRunning()).isFalse();
    assertThat(output).doesNotContain("Stopped run failed");
  }
}
