package dev.idemkit.micrometer;

import static dev.idemkit.micrometer.OutboxMetricNames.BACKLOG;
import static dev.idemkit.micrometer.OutboxMetricNames.CONSUMED;
import static dev.idemkit.micrometer.OutboxMetricNames.CONSUME_FAILED;
import static dev.idemkit.micrometer.OutboxMetricNames.DELIVERED;
import static dev.idemkit.micrometer.OutboxMetricNames.DUPLICATES_SKIPPED;
import static dev.idemkit.micrometer.OutboxMetricNames.GAP_HELD;
import static dev.idemkit.micrometer.OutboxMetricNames.GAP_RELEASED;
import static dev.idemkit.micrometer.OutboxMetricNames.HELD_MESSAGES;
import static dev.idemkit.micrometer.OutboxMetricNames.OLDEST_UNSENT_AGE;
import static dev.idemkit.micrometer.OutboxMetricNames.PARKED_DELIVERIES;
import static dev.idemkit.micrometer.OutboxMetricNames.PARKED_EVENTS;
import static dev.idemkit.micrometer.OutboxMetricNames.PARKED_MESSAGES;
import static dev.idemkit.micrometer.OutboxMetricNames.PUBLISHED;
import static dev.idemkit.micrometer.OutboxMetricNames.PUBLISH_FAILED;
import static dev.idemkit.micrometer.OutboxMetricNames.STALE_SKIPPED;
import static dev.idemkit.micrometer.OutboxMetricNames.TAG_CHANNEL;
import static dev.idemkit.micrometer.OutboxMetricNames.TAG_CONSUMER;

import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.Outbox;
import dev.idemkit.outbox.OutboxListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Meters for events across boundaries: an {@link OutboxListener} to give the relay, the inbox
 * consumers and the delivery senders (rates: published, failed, consumed, duplicates skipped,
 * delivered), and a {@link MeterBinder} with gauges read from the database (backlog, oldest unsent
 * age, parked events, parked messages, and parked deliveries where given). Names are in {@link
 * OutboxMetricNames}.
 *
 * <p>The gauges' two queries run at most once per refresh interval (10 s by default), by one thread
 * at a time; a scrape in between, or during a query, reads the last values. A failed query reports
 * {@code NaN}. Counters count only after {@link #bindTo} (events before are not recorded).
 * Thread-safe.
 */
public final class OutboxMetrics implements MeterBinder, OutboxListener {

  private static final System.Logger LOG = System.getLogger(OutboxMetrics.class.getName());

  private final Callable<Outbox.Backlog> backlog;
  private final Callable<Long> parkedMessages;
  private final Callable<Long> heldMessages;
  private volatile Callable<Long> parkedDeliveries;
  private final Clock clock;
  private final Duration refreshInterval;
  private final ReentrantLock refreshing = new ReentrantLock();
  private volatile Sample last;
  private volatile MeterRegistry registry;

  /** Consumers whose counters exist from the start ({@link #expect}). */
  private final List<InboxConsumer> expected = new java.util.concurrent.CopyOnWriteArrayList<>();

  private record Sample(
      double backlog,
      double oldestSeconds,
      double parked,
      double parkedMessages,
      double heldMessages,
      double parkedDeliveries,
      Instant takenAt) {}

  /**
   * Meters with gauges read from {@code backlog} and {@code parkedMessages}.
   *
   * @param clock what "now" is for the refresh interval
   */
  public OutboxMetrics(
      Callable<Outbox.Backlog> backlog,
      Callable<Long> parkedMessages,
      Clock clock,
      Duration refreshInterval) {
    this(backlog, parkedMessages, null, clock, refreshInterval);
  }

  /**
   * The same, with a gauge of the messages held behind sequence gaps ({@value
   * OutboxMetricNames#HELD_MESSAGES}) read from {@code heldMessages}.
   */
  public OutboxMetrics(
      Callable<Outbox.Backlog> backlog,
      Callable<Long> parkedMessages,
      Callable<Long> heldMessages,
      Clock clock,
      Duration refreshInterval) {
    this.backlog = Objects.requireNonNull(backlog);
    this.parkedMessages = Objects.requireNonNull(parkedMessages);
    this.heldMessages = heldMessages;
    this.clock = Objects.requireNonNull(clock);
    this.refreshInterval = Objects.requireNonNull(refreshInterval);
  }

  /**
   * Meters for {@code outbox} and the parked (and, of those applying in sequence, held) messages of
   * {@code consumers}.
   */
  public static OutboxMetrics of(Outbox outbox, List<InboxConsumer> consumers) {
    List<InboxConsumer> all = List.copyOf(consumers);
    OutboxMetrics metrics =
        new OutboxMetrics(
            outbox::backlog,
            () -> {
              long n = 0;
              for (InboxConsumer c : all) {
                n += c.parkedCount();
              }
              return n;
            },
            () -> {
              long n = 0;
              for (InboxConsumer c : all) {
                if (c.inSequence()) {
                  n += c.heldSummary().count();
                }
              }
              return n;
            },
            Clock.systemUTC(),
            IdempotencyMetrics.DEFAULT_REFRESH_INTERVAL);
    return metrics.expect(all);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    Gauge.builder(BACKLOG, this, m -> m.sample().backlog())
        .description("Outbox events waiting to be sent (not parked)")
        .register(registry);
    TimeGauge.builder(OLDEST_UNSENT_AGE, this, TimeUnit.SECONDS, m -> m.sample().oldestSeconds())
        .description("How long the oldest unsent outbox event has waited")
        .register(registry);
    Gauge.builder(PARKED_EVENTS, this, m -> m.sample().parked())
        .description("Outbox events parked after their last attempt")
        .register(registry);
    Gauge.builder(PARKED_MESSAGES, this, m -> m.sample().parkedMessages())
        .description("Inbox messages parked after their last attempt")
        .register(registry);
    if (heldMessages != null) {
      Gauge.builder(HELD_MESSAGES, this, m -> m.sample().heldMessages())
          .description("Inbox messages held behind a gap in their aggregate's sequence")
          .register(registry);
    }
    if (parkedDeliveries != null) {
      Gauge.builder(PARKED_DELIVERIES, this, m -> m.sample().parkedDeliveries())
          .description(
              "Deliveries (side effects outside the database) parked after their last attempt")
          .register(registry);
    }
    this.registry = registry;
    registerAtZero(registry);
  }

  private Sample sample() {
    Sample s = last;
    Instant now = clock.instant();
    if (s != null && now.isBefore(s.takenAt().plus(refreshInterval))) {
      return s;
    }
    if (!refreshing.tryLock()) {
      return s != null
          ? s
          : new Sample(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, now);
    }
    try {
      double b = Double.NaN;
      double age = Double.NaN;
      double parked = Double.NaN;
      double messages = Double.NaN;
      try {
        Outbox.Backlog bl = backlog.call();
        b = bl.unsent();
        age = bl.oldestUnsentAge().toNanos() / 1e9;
        parked = bl.parked();
      } catch (Exception e) {
        LOG.log(System.Logger.Level.WARNING, "Could not read the outbox backlog", e);
      }
      try {
        messages = parkedMessages.call();
      } catch (Exception e) {
        LOG.log(System.Logger.Level.WARNING, "Could not count parked inbox messages", e);
      }
      double held = Double.NaN;
      if (heldMessages != null) {
        try {
          held = heldMessages.call();
        } catch (Exception e) {
          LOG.log(System.Logger.Level.WARNING, "Could not count held inbox messages", e);
        }
      }
      double deliveries = Double.NaN;
      Callable<Long> parkedDeliveriesCount = parkedDeliveries;
      if (parkedDeliveriesCount != null) {
        try {
          deliveries = parkedDeliveriesCount.call();
        } catch (Exception e) {
          LOG.log(System.Logger.Level.WARNING, "Could not count parked deliveries", e);
        }
      }
      Sample fresh = new Sample(b, age, parked, messages, held, deliveries, now);
      last = fresh;
      return fresh;
    } finally {
      refreshing.unlock();
    }
  }

  /**
   * Adds a gauge of the parked deliveries ({@value OutboxMetricNames#PARKED_DELIVERIES}), read from
   * {@code count} with the other gauges, for example {@link
   * dev.idemkit.outbox.Deliveries#parkedCount}. Call it before {@link #bindTo}. Returns this.
   */
  public OutboxMetrics parkedDeliveries(Callable<Long> count) {
    if (registry != null) {
      throw new IllegalStateException("parkedDeliveries must be set before bindTo");
    }
    this.parkedDeliveries = Objects.requireNonNull(count);
    return this;
  }

  /**
   * Registers {@code consumers}' counters at 0 now (or when bound), so that a rate over them reads
   * 0 before their first message rather than "no data". Returns this.
   */
  public OutboxMetrics expect(Collection<InboxConsumer> consumers) {
    for (InboxConsumer c : consumers) {
      expected.add(c);
    }
    MeterRegistry r = registry;
    if (r != null) {
      registerAtZero(r);
    }
    return this;
  }

  private void registerAtZero(MeterRegistry r) {
    Counter.builder(PUBLISHED).register(r);
    Counter.builder(PUBLISH_FAILED).register(r);
    for (InboxConsumer c : expected) {
      List<String> names =
          c.inSequence()
              ? List.of(
                  CONSUMED,
                  DUPLICATES_SKIPPED,
                  CONSUME_FAILED,
                  GAP_HELD,
                  GAP_RELEASED,
                  STALE_SKIPPED)
              : List.of(CONSUMED, DUPLICATES_SKIPPED, CONSUME_FAILED);
      for (String name : names) {
        Counter.builder(name).tags(TAG_CONSUMER, c.consumerName()).register(r);
      }
    }
  }

  private void count(String name, int n, String... tags) {
    MeterRegistry r = registry;
    if (r != null && n > 0) {
      Counter.builder(name).tags(tags).register(r).increment(n);
    }
  }

  @Override
  public void published(int count) {
    count(PUBLISHED, count);
  }

  @Override
  public void publishFailed(int count) {
    count(PUBLISH_FAILED, count);
  }

  @Override
  public void consumed(String consumer, int count) {
    count(CONSUMED, count, TAG_CONSUMER, consumer);
  }

  @Override
  public void duplicatesSkipped(String consumer, int count) {
    count(DUPLICATES_SKIPPED, count, TAG_CONSUMER, consumer);
  }

  @Override
  public void consumeFailed(String consumer) {
    count(CONSUME_FAILED, 1, TAG_CONSUMER, consumer);
  }

  @Override
  public void messagesHeld(String consumer, int count) {
    count(GAP_HELD, count, TAG_CONSUMER, consumer);
  }

  @Override
  public void heldReleased(String consumer, int count) {
    count(GAP_RELEASED, count, TAG_CONSUMER, consumer);
  }

  @Override
  public void staleSkipped(String consumer, int count) {
    count(STALE_SKIPPED, count, TAG_CONSUMER, consumer);
  }

  @Override
  public void delivered(String channel, int count) {
    count(DELIVERED, count, TAG_CHANNEL, channel);
  }
}
