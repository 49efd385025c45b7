package dev.idemkit.support;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * Runs polls on threads of its own until stopped: Idemkit's one poll loop (the outbox relay, the
 * delivery sender, the Kafka consumer, the Spring Boot starter's record-life workers), so that
 * retry pacing and shutdown are written once.
 *
 * <p>A worker has one or more <em>lanes</em>; each lane runs its {@link Poll} again and again, one
 * poll at a time, pausing between two polls as long as the poll answered (zero: at once). Lanes run
 * side by side, each on a thread of a {@link ScheduledThreadPoolExecutor} with one thread per lane;
 * a pause holds no thread. A poll that throws (an {@link Error} included) does not end its lane:
 * the {@link Builder#afterFailure failure handler} says how long to pause before the next.
 *
 * <p><b>Start and stop.</b> {@link #start} and {@link #stop} are idempotent and synchronized; a
 * stopped worker can be started again. {@link #stop} lets no new poll begin, calls the {@link
 * Builder#onStop wake-up} (to cut a poll's blocking call short, such as a Kafka client's {@code
 * wakeup()}), interrupts the polls in flight unless told {@link Builder#interruptOnStop not to},
 * then waits for them to end, at most the {@link Builder#stopTimeout stop timeout}. A stop that is
 * itself interrupted stops waiting and keeps the interrupt. The {@link Builder#whenStopped last
 * step} runs once the last poll has ended, never beside one: on the last lane's thread, or on the
 * stopping thread when every lane had already ended. What must not run beside a poll (closing a
 * client that is not thread-safe) goes there.
 */
public final class PollingWorker {

  private static final Logger LOG = System.getLogger(PollingWorker.class.getName());

  /** One poll of a lane. */
  @FunctionalInterface
  public interface Poll {
    /**
     * Polls once.
     *
     * @return how long the lane pauses before its next poll ({@link Duration#ZERO} or null: at
     *     once)
     */
    Duration pollOnce() throws Exception;
  }

  private final String name;
  private final int lanes;
  private final IntFunction<Poll> lane;
  private final Function<Throwable, Duration> afterFailure;
  private final boolean interruptOnStop;
  private final Runnable onStop;
  private final Runnable whenStopped;
  private final Duration stopTimeout;
  private final Duration firstPollAfter;
  private Run run;

  private PollingWorker(Builder b) {
    this.name = b.name;
    this.lanes = b.lanes;
    this.lane = b.lane;
    this.afterFailure = b.afterFailure;
    this.interruptOnStop = b.interruptOnStop;
    this.onStop = b.onStop;
    this.whenStopped = b.whenStopped;
    this.stopTimeout = b.stopTimeout;
    this.firstPollAfter = b.firstPollAfter;
  }

  /** A worker whose threads are named {@code name} (with a lane number if it has several). */
  public static Builder named(String name) {
    return new Builder(name);
  }

  /**
   * Starts the lanes, their first polls after the {@link Builder#firstPollAfter first pause}
   * (default: at once), unless the worker is running already.
   */
  public synchronized PollingWorker start() {
    if (run != null) {
      return this;
    }
    Run r = new Run();
    run = r;
    r.executor.prestartAllCoreThreads();
    for (int i = 0; i < lanes; i++) {
      Poll poll = Objects.requireNonNull(lane.apply(i), "lane");
      r.schedule(poll, firstPollAfter);
    }
    return this;
  }

  /** Whether the worker was started and not stopped since. */
  public synchronized boolean running() {
    return run != null;
  }

  /**
   * Stops the worker (see the class comment) and answers whether every poll in flight ended within
   * the stop timeout. Does nothing, and answers {@code true}, if it is not running.
   */
  public synchronized boolean stop() {
    Run r = run;
    if (r == null) {
      return true;
    }
    run = null;
    r.stopping = true;
    try {
      onStop.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, name + ": the wake-up on stop failed", e);
    }
    if (interruptOnStop) {
      r.executor.shutdownNow();
    } else {
      r.executor.shutdown();
    }
    try {
      return r.executor.awaitTermination(stopTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * One start-to-stop run: its own executor and stop flag, so that a poll of a run that outlived
   * its stop timeout never schedules into the next run.
   */
  private final class Run {
    final ScheduledThreadPoolExecutor executor;
    volatile boolean stopping;

    Run() {
      AtomicInteger threads = new AtomicInteger();
      ThreadFactory factory =
          task -> {
            Thread t = new Thread(task, lanes == 1 ? name : name + "-" + threads.getAndIncrement());
            t.setDaemon(true);
            return t;
          };
      executor =
          new ScheduledThreadPoolExecutor(lanes, factory) {
            @Override
            protected void terminated() {
              // Runs on the last thread to end (or on the stopping thread if none was left): after
              // every poll of this run, never beside one.
              try {
                whenStopped.run();
              } catch (RuntimeException | Error e) {
                LOG.log(Level.WARNING, name + ": the last step after stopping failed", e);
              }
            }
          };
      // A pause still pending when the worker stops is dropped, not waited out.
      executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
      executor.setRemoveOnCancelPolicy(true);
    }

    void schedule(Poll poll, Duration pause) {
      try {
        executor.schedule(() -> pollOnce(poll), pause.toNanos(), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        // Stopped meanwhile: the lane ends here.
      }
    }

    /**
     * One poll of a lane, then the lane's next, scheduled.
     *
     * <p>Where a lane and {@link PollingWorker#stop} meet: the stopping thread sets {@code
     * stopping}, calls the wake-up, then shuts the executor down (interrupting the running polls,
     * unless told not to); the lane's thread may be anywhere in here. Before the poll, it sees the
     * flag and ends; or it read the flag just before the stop set it, and its poll begins anyway:
     * it is then one of the polls {@code awaitTermination} waits for, and the interrupt (or the
     * wake-up, called before) cuts it short as it would have cut one already running. During the
     * poll, what the cut throws is not logged as a failure. After the poll, it sees the flag and
     * schedules nothing; or its {@code schedule} meets the shut-down executor (rejected: the lane
     * ends), or lands just before the shutdown, which drops it (delayed tasks are not kept past a
     * shutdown). Either way the lane ends with the run, and no poll is left to run beside the last
     * step.
     */
    private void pollOnce(Poll poll) {
      if (stopping) {
        return;
      }
      Duration pause;
      try {
        pause = poll.pollOnce();
      } catch (Exception | Error e) {
        if (stopping) {
          return; // what the stop's interrupt or wake-up cut short is no failure
        }
        // The lane lives on, whatever a poll throws: a lane that ended would leave its work undone
        // with nothing but a log line to say so.
        pause = pauseAfter(e);
      }
      if (!stopping) {
        schedule(poll, pause == null ? Duration.ZERO : pause);
      }
    }

    /** The failure handler's pause; a second if the handler itself fails (the lane must go on). */
    private Duration pauseAfter(Throwable failure) {
      try {
        return afterFailure.apply(failure);
      } catch (RuntimeException | Error e) {
        e.addSuppressed(failure);
        LOG.log(Level.WARNING, name + ": the failure handler failed; trying again in a second", e);
        return Duration.ofSeconds(1);
      }
    }
  }

  /** Configures a worker; everything but its name has a default. */
  public static final class Builder {
    private final String name;
    private int lanes = 1;
    private IntFunction<Poll> lane;
    private Function<Throwable, Duration> afterFailure;
    private boolean interruptOnStop = true;
    private Runnable onStop = () -> {};
    private Runnable whenStopped = () -> {};
    private Duration stopTimeout = Duration.ofSeconds(10);
    private Duration firstPollAfter = Duration.ZERO;

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
      this.afterFailure =
          e -> {
            LOG.log(Level.WARNING, name + ": poll failed; trying again in a second", e);
            return Duration.ofSeconds(1);
          };
    }

    /** One lane running {@code poll}. */
    public Builder poll(Poll poll) {
      Objects.requireNonNull(poll, "poll");
      return lanes(1, i -> poll);
    }

    /**
     * {@code count} lanes (at least 1), lane {@code i} running the poll {@code lane.apply(i)} (made
     * at each {@link #start}, so a lane's state starts afresh).
     */
    public Builder lanes(int count, IntFunction<Poll> lane) {
      if (count < 1) {
        throw new IllegalArgumentException(name + ": lanes must be at least 1, was " + count);
      }
      this.lanes = count;
      this.lane = Objects.requireNonNull(lane, "lane");
      return this;
    }

    /**
     * Told what a poll threw (logs it) and answers the pause before the lane's next poll (default:
     * a warning, and a second).
     */
    public Builder afterFailure(Function<Throwable, Duration> afterFailure) {
      this.afterFailure = Objects.requireNonNull(afterFailure);
      return this;
    }

    /** Whether {@link PollingWorker#stop} interrupts the polls in flight (default yes). */
    public Builder interruptOnStop(boolean interrupt) {
      this.interruptOnStop = interrupt;
      return this;
    }

    /** Called by {@link PollingWorker#stop} before it waits: cuts a blocking poll short. */
    public Builder onStop(Runnable wakeUp) {
      this.onStop = Objects.requireNonNull(wakeUp);
      return this;
    }

    /**
     * Runs once after the last poll of a run ended, never beside one (on the last lane's thread, or
     * on the stopping thread when every lane had already ended).
     */
    public Builder whenStopped(Runnable last) {
      this.whenStopped = Objects.requireNonNull(last);
      return this;
    }

    /** How long {@link PollingWorker#stop} waits for the polls in flight (default 10 s). */
    public Builder stopTimeout(Duration timeout) {
      this.stopTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /** How long after {@link PollingWorker#start} the lanes' first polls wait (default none). */
    public Builder firstPollAfter(Duration pause) {
      this.firstPollAfter = Objects.requireNonNull(pause);
      return this;
    }

    public PollingWorker build() {
      if (lane == null) {
        throw new IllegalStateException(name + ": give the worker a poll");
      }
      return new PollingWorker(this);
    }
  }
}
