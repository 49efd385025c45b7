package dev.idemkit.internal;

import dev.idemkit.Outcome;
import dev.idemkit.QuotaExceededException;
import dev.idemkit.Quotas;
import dev.idemkit.spi.QuotaSync;
import dev.idemkit.spi.QuotaSync.LiveRecords;
import dev.idemkit.spi.QuotaSync.SharedQuotaCounts;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Decides a new key's admission against its tenant's {@link Quotas} in memory, with no statement:
 * against this instance's own counts, exact, plus what the other instances counted as of the last
 * {@link #exchange} (about once a second, by a background worker).
 *
 * <p>New keys: this instance's keys of the current minute plus the others' of that minute as they
 * last wrote them. Live records: the store's count at the last exchange plus this instance's {@link
 * Ticket tickets}, the phased operations it admitted that the count may not have seen (their first
 * transaction had not committed when the count began, or it committed after) and that still run.
 * Minutes are on the store's clock, carried forward between exchanges on the engine's ticker;
 * before the first exchange, on this JVM's clock.
 *
 * <p>Which threads meet here: request threads admitting keys of the same tenant, and the one worker
 * thread installing an exchange. Each tenant's counts are guarded by its {@link Tenant}'s monitor,
 * held only for a few field updates; an exchange installs one tenant at a time, so an admission
 * sees either the counts before or after it, never half of each.
 */
final class QuotaGate {

  private static final Duration LIVE_RETRY_AFTER = Duration.ofSeconds(5);
  private static final Duration AWAITING_OPERATOR_RETRY_AFTER = Duration.ofSeconds(60);

  private final Quotas quotas;
  private final LongSupplier ticker;
  private final String instance = UUID.randomUUID().toString();
  private final ConcurrentHashMap<String, Tenant> tenants = new ConcurrentHashMap<>();

  /**
   * Advances when an exchange begins: a ticket committed in an earlier generation committed before
   * that exchange's count began, so the count includes it while it is live.
   */
  private final AtomicLong generation = new AtomicLong();

  /** The store's time at the last exchange and the ticker then; null before the first. */
  private volatile ClockBase clockBase;

  private record ClockBase(Instant at, long tick) {}

  QuotaGate(Quotas quotas, LongSupplier ticker) {
    this.quotas = quotas;
    this.ticker = ticker;
  }

  String instance() {
    return instance;
  }

  /**
   * Counts a new key of {@code tenant}, or refuses it with {@link QuotaExceededException}. A key
   * whose record {@code staysLive} after the transaction that claimed it (a phased operation with a
   * call pending) takes one of the tenant's live places and gets a ticket that holds it until an
   * exchange's count sees the record or the operation ends; any other new key is refused only while
   * the tenant's live records are over the limit, as before.
   *
   * @return the ticket of a key that stays live, else {@link Ticket#NONE}
   */
  Ticket admit(String tenant, boolean staysLive) {
    Instant now = now();
    long minute = minuteOf(now);
    while (true) {
      Tenant t = tenants.computeIfAbsent(tenant, name -> new Tenant());
      synchronized (t) {
        if (!t.retired) {
          return admit(t, now, minute, staysLive);
        }
      }
    }
  }

  /**
   * The refusal {@link #admit} would answer for any new key of {@code tenant} now (one that does
   * not stay live), counting nothing; empty while the tenant has room. The engine asks it before
   * any work on a new key: a tenant that filled its quota is refused with one read of the key's
   * record and no transaction (a key that has a record is answered from it, never refused).
   *
   * <p>A request thread reads the counts under the tenant's monitor, as {@link #admit} does; the
   * answer may be stale by the time the caller acts on it only towards refusing: within a minute
   * the counts only grow until an exchange lowers the live records, which refuses at most until
   * that exchange, as {@link #admit} itself does between exchanges.
   */
  Optional<Outcome.QuotaExceeded> refusal(String tenant) {
    Tenant t = tenants.get(tenant);
    if (t == null) {
      return Optional.empty();
    }
    Instant now = now();
    long minute = minuteOf(now);
    synchronized (t) {
      return Optional.ofNullable(refusal(t, now, minute, false));
    }
  }

  /** Why {@code t} refuses a new key now, or null; under {@code t}'s monitor, counting nothing. */
  private Outcome.QuotaExceeded refusal(Tenant t, Instant now, long minute, boolean staysLive) {
    int keysLimit = quotas.newKeysPerMinute();
    if (keysLimit > 0 && minute <= t.minute && t.ownNewKeys + t.othersNewKeys >= keysLimit) {
      Instant next = Instant.ofEpochSecond((t.minute + 1) * 60);
      long wait = Math.max(1, (Duration.between(now, next).toMillis() + 999) / 1000);
      return new Outcome.QuotaExceeded("new_keys", keysLimit, Duration.ofSeconds(wait));
    }
    int liveLimit = quotas.liveRecords();
    if (liveLimit > 0 && t.live + t.tickets.size() + (staysLive ? 1 : 0) > liveLimit) {
      return new Outcome.QuotaExceeded(
          "live_records",
          liveLimit,
          t.escalated >= liveLimit ? AWAITING_OPERATOR_RETRY_AFTER : LIVE_RETRY_AFTER);
    }
    return null;
  }

  /** {@link #admit(String, boolean)} under {@code t}'s monitor. */
  private Ticket admit(Tenant t, Instant now, long minute, boolean staysLive) {
    if (minute > t.minute) {
      t.minute = minute;
      t.ownNewKeys = 0;
      t.othersNewKeys = 0;
    }
    Outcome.QuotaExceeded refused = refusal(t, now, minute, staysLive);
    if (refused != null) {
      throw new QuotaExceededException(refused);
    }
    int liveLimit = quotas.liveRecords();
    t.ownNewKeys++;
    if (!staysLive || liveLimit == 0) {
      return Ticket.NONE;
    }
    Ticket ticket = new Ticket(t);
    t.tickets.add(ticket);
    return ticket;
  }

  /**
   * Gives back a new key {@link #admit admitted} in this minute whose transaction found the key
   * already recorded (a local operation's record written last met the first's): it was no new key.
   */
  void release(String tenant) {
    Tenant t = tenants.get(tenant);
    if (t != null) {
      synchronized (t) {
        if (t.ownNewKeys > 0 && t.minute == minuteOf(now())) {
          t.ownNewKeys--;
        }
      }
    }
  }

  /**
   * One exchange through {@code sync}: writes this instance's new keys of the current minute, then
   * installs what the exchange read. Called by one thread at a time (the worker's); a failed
   * exchange changes nothing here and the next one tries again.
   */
  void exchange(QuotaSync sync) {
    long covered = generation.getAndIncrement();
    long tick = ticker.getAsLong();
    long minute = minuteOf(now());
    Map<String, Integer> own = new HashMap<>();
    tenants.forEach(
        (name, t) -> {
          synchronized (t) {
            if (t.minute == minute && t.ownNewKeys > 0) {
              own.put(name, t.ownNewKeys);
            }
          }
        });
    SharedQuotaCounts read =
        sync.exchange(instance, Instant.ofEpochSecond(minute * 60), Map.copyOf(own));
    clockBase = new ClockBase(read.now(), tick);
    Set<String> names = new HashSet<>(tenants.keySet());
    names.addAll(read.othersNewKeys().keySet());
    names.addAll(read.live().keySet());
    for (String name : names) {
      Tenant t = tenants.computeIfAbsent(name, n -> new Tenant());
      LiveRecords live = read.live().getOrDefault(name, new LiveRecords(0, 0));
      boolean idle;
      synchronized (t) {
        if (minute > t.minute) {
          t.minute = minute;
          t.ownNewKeys = 0;
        }
        if (t.minute == minute) {
          t.othersNewKeys = read.othersNewKeys().getOrDefault(name, 0);
        }
        t.live = live.live();
        t.escalated = live.escalated();
        t.tickets.removeIf(ticket -> ticket.committedIn >= 0 && ticket.committedIn <= covered);
        idle = t.ownNewKeys == 0 && t.othersNewKeys == 0 && t.live == 0 && t.tickets.isEmpty();
      }
      if (idle) {
        // Forgotten until its next key; an admission that made it again meanwhile is not lost:
        // remove(key, value) leaves a tenant another thread already replaced or counted in.
        synchronized (t) {
          if (t.ownNewKeys == 0 && t.tickets.isEmpty() && tenants.remove(name, t)) {
            t.retired = true; // an admission that found it before its removal looks again
          }
        }
      }
    }
  }

  /** The store's time carried forward on the ticker; this JVM's clock before any exchange. */
  Instant now() {
    ClockBase base = clockBase;
    if (base == null) {
      return Instant.now();
    }
    return base.at().plusNanos(ticker.getAsLong() - base.tick());
  }

  private static long minuteOf(Instant at) {
    return at.truncatedTo(ChronoUnit.MINUTES).getEpochSecond() / 60;
  }

  /**
   * A tenant's counts. {@code minute}: the epoch minute {@code ownNewKeys} and {@code
   * othersNewKeys} count in; {@code live} and {@code escalated}: the store's count at the last
   * exchange; {@code tickets}: this instance's live operations that count may have missed.
   */
  private static final class Tenant {
    long minute;
    int ownNewKeys;
    int othersNewKeys;
    int live;
    int escalated;
    boolean retired;
    final Set<Ticket> tickets = new HashSet<>();
  }

  /**
   * A live place a phased operation of this instance holds on top of the store's count: from its
   * admission until the exchange whose count began after its first commit (the count then has the
   * record while it is live), or until the operation ends finished or rolled back.
   */
  static final class Ticket {
    static final Ticket NONE = new Ticket(null);

    private final Tenant tenant;

    /** The generation its transaction committed in; -1: not committed (yet). */
    private long committedIn = -1;

    private Ticket(Tenant tenant) {
      this.tenant = tenant;
    }

    /**
     * Its first transaction committed. Called after the commit returned: an exchange that began
     * after this call's read of the generation counts the record.
     */
    void committed(QuotaGate gate) {
      if (tenant != null) {
        synchronized (tenant) {
          committedIn = gate.generation.get();
        }
      }
    }

    /**
     * Its request ended: the place is given back when no record stays live (the transaction rolled
     * back, or the operation finished); a record left live keeps it until an exchange counts it.
     */
    void ended(boolean recordLive) {
      if (tenant != null) {
        synchronized (tenant) {
          if (!recordLive || committedIn < 0) {
            tenant.tickets.remove(this);
          }
        }
      }
    }
  }
}
