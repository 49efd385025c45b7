package dev.idemkit.micrometer;

import static dev.idemkit.micrometer.IdempotencyMetricNames.CONFLICT_DIFFERENT_REQUEST_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.ESCALATED_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.EXPIRED_RETRY_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.FAILURE_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.LOST_OWNERSHIP_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.OUTCOME_EXECUTED;
import static dev.idemkit.micrometer.IdempotencyMetricNames.OUTCOME_IN_PROGRESS;
import static dev.idemkit.micrometer.IdempotencyMetricNames.OUTCOME_MISMATCH;
import static dev.idemkit.micrometer.IdempotencyMetricNames.OUTCOME_PENDING;
import static dev.idemkit.micrometer.IdempotencyMetricNames.OUTCOME_QUOTA_EXCEEDED;
import static dev.idemkit.micrometer.IdempotencyMetricNames.OUTCOME_REJECTED;
import static dev.idemkit.micrometer.IdempotencyMetricNames.OUTCOME_REPLAYED;
import static dev.idemkit.micrometer.IdempotencyMetricNames.REPLAY_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.REQUESTS;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_KIND;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_OPERATION;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_OUTCOME;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAG_STATE;
import static dev.idemkit.micrometer.IdempotencyMetricNames.TAKEOVER_COUNT;
import static dev.idemkit.micrometer.IdempotencyMetricNames.UNKNOWN_STATE_COUNT;

import dev.idemkit.Outcome;
import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.Takeover;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Records what the engine reports as Micrometer meters (names in {@link IdempotencyMetricNames}).
 * Pass it to {@code IdempotencyConfig.builder().listener(...)}, and bind it to a registry; {@link
 * IdempotencyMetrics} does both for you and adds the recovery gauge.
 *
 * <ul>
 *   <li>{@code onOutcome}: the {@code idempotency.requests} timer by operation and outcome, plus
 *       {@code idempotency.replay.count} for a replay and {@code
 *       idempotency.conflict.different_request.count} for a mismatch;
 *   <li>{@code onExpiredRetry}, {@code onUnknownState}, {@code onLostOwnership}: a counter each;
 *   <li>{@code onTakeover}: {@code idempotency.takeover.count} by kind;
 *   <li>{@code onFailure}: {@code idempotency.failure.count} by the state the record was left in.
 * </ul>
 *
 * <p>Only the scope's operation name reaches a meter, never the tenant nor the key. The timer
 * publishes no histogram by default; configure one with a {@code MeterFilter} on {@value
 * IdempotencyMetricNames#REQUESTS} if you want percentiles.
 *
 * <p>Cheap and safe on the request path: an operation's meters are registered once, when the
 * operation is first seen, and then read from a per-operation cache without allocating. The meters
 * with only the {@code operation} tag are registered together at that moment, so their rates read 0
 * rather than absent; those with a second tag (outcome, kind, state) when that value first occurs.
 * A callback never throws: a meter that cannot be recorded (say, a name already registered as
 * another meter type) is dropped, and the first such failure is logged.
 *
 * <p>Events before the first {@link #bindTo(MeterRegistry)} are not recorded. Binding to several
 * registries records into each.
 */
public final class MicrometerIdempotencyListener implements IdempotencyListener, MeterBinder {

  private static final System.Logger LOG =
      System.getLogger(MicrometerIdempotencyListener.class.getName());

  /** Values of the outcome tag, indexed by {@link #outcomeIndex(Outcome)}. */
  private static final String[] OUTCOMES = {
    OUTCOME_EXECUTED,
    OUTCOME_REJECTED,
    OUTCOME_REPLAYED,
    OUTCOME_IN_PROGRESS,
    OUTCOME_MISMATCH,
    OUTCOME_PENDING,
    OUTCOME_QUOTA_EXCEEDED
  };

  /** Each outcome's place in {@link #OUTCOMES}. */
  private static final Outcome.Visitor<Integer> OUTCOME_INDEX =
      new Outcome.Visitor<>() {
        @Override
        public Integer executed(Outcome.Executed executed) {
          return 0;
        }

        @Override
        public Integer rejected(Outcome.Rejected rejected) {
          return 1;
        }

        @Override
        public Integer replayed(Outcome.Replayed replayed) {
          return 2;
        }

        @Override
        public Integer inProgress(Outcome.InProgress inProgress) {
          return 3;
        }

        @Override
        public Integer mismatch(Outcome.Mismatch mismatch) {
          return 4;
        }

        @Override
        public Integer outcomePending(Outcome.OutcomePending pending) {
          return 5;
        }

        @Override
        public Integer quotaExceeded(Outcome.QuotaExceeded refused) {
          return 6;
        }
      };

  private static final String[] TAKEOVER_KINDS = lowerCaseNames(Takeover.values());
  private static final String[] RECORD_STATES = lowerCaseNames(RecordState.values());

  /**
   * One entry per bound registry. Copy-on-write: binding is rare, recording is on every request and
   * reads the array without a lock.
   */
  private volatile Recorder[] recorders = new Recorder[0];

  private final AtomicBoolean failureLogged = new AtomicBoolean();

  /** A listener that records into the registries it is later {@linkplain #bindTo bound} to. */
  public MicrometerIdempotencyListener() {}

  /** A listener already bound to {@code registry}. */
  public static MicrometerIdempotencyListener create(MeterRegistry registry) {
    MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener();
    listener.bindTo(registry);
    return listener;
  }

  /**
   * Starts recording into {@code registry} (as well as into any registry bound before). Binding the
   * same registry again does nothing.
   */
  @Override
  public synchronized void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    for (Recorder r : recorders) {
      if (r.registry == registry) {
        return;
      }
    }
    Recorder[] more = Arrays.copyOf(recorders, recorders.length + 1);
    more[more.length - 1] = new Recorder(registry);
    recorders = more;
  }

  @Override
  public void onOutcome(ScopedKey id, Outcome outcome, Duration elapsed) {
    for (Recorder r : recorders) {
      try {
        OperationMeters meters = r.meters(id);
        int index = outcomeIndex(outcome);
        meters.timer(index).record(elapsed.toNanos(), TimeUnit.NANOSECONDS);
        if (outcome instanceof Outcome.Replayed) {
          meters.replays.increment();
        } else if (outcome instanceof Outcome.Mismatch) {
          meters.conflicts.increment();
        }
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onExpiredRetry(ScopedKey id) {
    for (Recorder r : recorders) {
      try {
        r.meters(id).expiredRetries.increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onTakeover(ScopedKey id, Takeover kind) {
    for (Recorder r : recorders) {
      try {
        r.meters(id).takeover(kind.ordinal()).increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onUnknownState(ScopedKey id) {
    for (Recorder r : recorders) {
      try {
        r.meters(id).unknownStates.increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onLostOwnership(ScopedKey id) {
    for (Recorder r : recorders) {
      try {
        r.meters(id).lostOwnerships.increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onFailure(ScopedKey id, RecordState state, Throwable cause) {
    for (Recorder r : recorders) {
      try {
        r.meters(id).failure(state.ordinal()).increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onCleanup(long bodies, long records) {
    for (Recorder r : recorders) {
      try {
        if (bodies > 0) {
          Counter.builder(IdempotencyMetricNames.CLEANUP_ROWS)
              .tag(IdempotencyMetricNames.TAG_CLEANUP_KIND, "body")
              .register(r.registry)
              .increment(bodies);
        }
        if (records > 0) {
          Counter.builder(IdempotencyMetricNames.CLEANUP_ROWS)
              .tag(IdempotencyMetricNames.TAG_CLEANUP_KIND, "record")
              .register(r.registry)
              .increment(records);
        }
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onEscalated(ScopedKey id) {
    for (Recorder r : recorders) {
      try {
        r.meters(id).escalations.increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  @Override
  public void onQuotaExceeded(ScopedKey id, String quota) {
    for (Recorder r : recorders) {
      try {
        Counter.builder(IdempotencyMetricNames.QUOTA_EXCEEDED_COUNT)
            .tag(TAG_OPERATION, id.operation())
            .tag(IdempotencyMetricNames.TAG_QUOTA, quota)
            .register(r.registry)
            .increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }
  }

  private void dropped(RuntimeException e) {
    if (failureLogged.compareAndSet(false, true)) {
      LOG.log(
          System.Logger.Level.WARNING,
          "Could not record an Idemkit meter; the request is unaffected and later failures are"
              + " logged at DEBUG only",
          e);
    } else {
      LOG.log(System.Logger.Level.DEBUG, "Could not record an Idemkit meter", e);
    }
  }

  private static int outcomeIndex(Outcome outcome) {
    return outcome.accept(OUTCOME_INDEX);
  }

  private static String[] lowerCaseNames(Enum<?>[] values) {
    String[] names = new String[values.length];
    for (int i = 0; i < values.length; i++) {
      names[i] = values[i].name().toLowerCase(Locale.ROOT);
    }
    return names;
  }

  /** The meters of one registry, cached by operation name. */
  private static final class Recorder {
    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, OperationMeters> byOperation =
        new ConcurrentHashMap<>();

    Recorder(MeterRegistry registry) {
      this.registry = registry;
    }

    OperationMeters meters(ScopedKey id) {
      String operation = id.operation();
      OperationMeters meters = byOperation.get(operation);
      if (meters == null) {
        meters = byOperation.computeIfAbsent(operation, op -> new OperationMeters(registry, op));
      }
      return meters;
    }
  }

  /**
   * The meters of one operation in one registry. The lazily registered ones sit in atomic arrays:
   * two threads may both register the same meter the first time, which is harmless because a
   * registry hands back the meter it already has for the same name and tags.
   */
  private static final class OperationMeters {
    private final MeterRegistry registry;
    private final Tags tags;
    final Counter replays;
    final Counter conflicts;
    final Counter expiredRetries;
    final Counter unknownStates;
    final Counter lostOwnerships;
    final Counter escalations;
    private final AtomicReferenceArray<Timer> timers = new AtomicReferenceArray<>(OUTCOMES.length);
    private final AtomicReferenceArray<Counter> takeovers =
        new AtomicReferenceArray<>(TAKEOVER_KINDS.length);
    private final AtomicReferenceArray<Counter> failures =
        new AtomicReferenceArray<>(RECORD_STATES.length);

    OperationMeters(MeterRegistry registry, String operation) {
      this.registry = registry;
      this.tags = Tags.of(TAG_OPERATION, operation);
      this.replays = counter(REPLAY_COUNT, "Requests answered with a stored response", tags);
      this.conflicts =
          counter(
              CONFLICT_DIFFERENT_REQUEST_COUNT,
              "Keys reused with a different command, refused",
              tags);
      this.expiredRetries =
          counter(
              EXPIRED_RETRY_COUNT,
              "Retries after their record's window, run as a new operation",
              tags);
      this.unknownStates =
          counter(
              UNKNOWN_STATE_COUNT,
              "Downstream outcomes that became or stayed unknown, left for recovery",
              tags);
      this.lostOwnerships =
          counter(
              LOST_OWNERSHIP_COUNT,
              "Owners that found their record taken over; their write was rolled back",
              tags);
      this.escalations =
          counter(
              ESCALATED_COUNT,
              "Unknown outcomes left to an operator after the last recovery attempt",
              tags);
    }

    Timer timer(int outcome) {
      Timer timer = timers.get(outcome);
      if (timer == null) {
        timer =
            Timer.builder(REQUESTS)
                .description("Time for an idempotent request to get its answer")
                .tags(tags)
                .tag(TAG_OUTCOME, OUTCOMES[outcome])
                .register(registry);
        timers.set(outcome, timer);
      }
      return timer;
    }

    Counter takeover(int kind) {
      Counter counter = takeovers.get(kind);
      if (counter == null) {
        counter =
            counter(
                TAKEOVER_COUNT,
                "Records that changed owner",
                tags.and(TAG_KIND, TAKEOVER_KINDS[kind]));
        takeovers.set(kind, counter);
      }
      return counter;
    }

    Counter failure(int state) {
      Counter counter = failures.get(state);
      if (counter == null) {
        counter =
            counter(
                FAILURE_COUNT,
                "Operations that failed unexpectedly, by the state the record was left in",
                tags.and(TAG_STATE, RECORD_STATES[state]));
        failures.set(state, counter);
      }
      return counter;
    }

    private Counter counter(String name, String description, Tags tags) {
      return Counter.builder(name).description(description).tags(tags).register(registry);
    }
  }
}
