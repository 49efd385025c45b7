package dev.idemkit.bench;

import dev.idemkit.bench.HttpFigures.Cpu;
import dev.idemkit.bench.HttpFigures.Errors;
import dev.idemkit.bench.HttpFigures.LongArray;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The traffic of {@code bench/flood} ({@link FloodBenchmark}): the other tenants' steady payments,
 * the flooder's new keys or retries of one key, and every payment acknowledged with a 201.
 */
final class FloodTraffic {

  static final String PATH = "/v1/payments";

  /**
   * Each tenant's own HTTP client, as tenants are different clients: one client's selector thread
   * serving the flooder's many connections would delay the others' answers in the driver.
   */
  private final Map<String, HttpClient> clients = new ConcurrentHashMap<>();

  /**
   * How long a flooder's request may take: a tenant's parked refusals are answered in turn (16 a
   * second with the service's settings), so with a thousand connections each waits about a minute.
   */
  private static final Duration FLOOD_TIMEOUT = Duration.ofMinutes(3);

  private final URI payments;
  private final int others;
  private final int otherRate;
  private final int flooders;
  private final int floodRate;
  private final PaymentsServiceProcess service;
  private final String runId = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong sequence = new AtomicLong();

  /** Every 201 that made a payment: what must be in the database afterwards. */
  private final ConcurrentLinkedQueue<Acknowledged> acknowledged = new ConcurrentLinkedQueue<>();

  record Acknowledged(String tenant, String key, String paymentId) {}

  /** A key paid once, with the body it was sent with and its first answer: what retries send. */
  record Paid(String apiKey, String key, String body, String answer) {}

  FloodTraffic(
      String base,
      int others,
      int otherRate,
      int flooders,
      int floodRate,
      PaymentsServiceProcess service) {
    this.payments = URI.create(base + PATH);
    this.others = others;
    this.otherRate = otherRate;
    this.flooders = flooders;
    this.floodRate = floodRate;
    this.service = service;
  }

  static String apiKey(String tenant) {
    return "sk_bench_" + tenant;
  }

  static String otherTenant(int i) {
    return "tenant_other_" + i;
  }

  /** Every payment acknowledged so far, any tenant's. */
  List<Acknowledged> acknowledged() {
    return List.copyOf(acknowledged);
  }

  /** The {@code like} pattern of the keys {@code who} sent in the phase {@code phase}. */
  String keyPattern(String who, String phase) {
    return who + "-" + runId + "-" + phase + "-%";
  }

  /** What the flooder sends in a phase: nothing, fresh keys, or retries of one key. */
  enum Flood {
    NONE,
    NEW,
    RETRY
  }

  /**
   * Runs the others' steady traffic for {@code length}, with the flood {@code flood} of {@code
   * floodTenant} (new keys) or of retries of {@code retried}.
   */
  FloodPhase measure(String name, Duration length, Flood flood, String floodTenant, Paid retried)
      throws Exception {
    FloodPhase phase = new FloodPhase(name);
    AtomicBoolean stop = new AtomicBoolean();
    int floodWorkers = flood == Flood.NONE ? 0 : flooders;
    ExecutorService pool = Executors.newFixedThreadPool(others + floodWorkers);
    List<Future<long[][]>> steady = new ArrayList<>();
    List<Future<?>> floods = new ArrayList<>();
    Cpu before = Cpu.now(service);
    long start = System.nanoTime();
    for (int i = 1; i <= others; i++) {
      String tenant = otherTenant(i);
      // Spread over the interval so that the tenants do not send in step.
      long offset = TimeUnit.SECONDS.toNanos(1) / otherRate * (i - 1) / others;
      steady.add(pool.submit(() -> steady(tenant, start + offset, stop, phase)));
    }
    long floodInterval = floodRate > 0 ? TimeUnit.SECONDS.toNanos(1) * floodWorkers / floodRate : 0;
    for (int w = 0; w < floodWorkers; w++) {
      long first = start + (floodInterval * w) / Math.max(1, floodWorkers);
      floods.add(
          pool.submit(
              () -> {
                flood(flood, floodTenant, retried, first, floodInterval, stop, phase);
                return null;
              }));
    }
    Thread.sleep(length.toMillis());
    stop.set(true);
    LongArray all = new LongArray();
    LongArray beforeRefusal = new LongArray();
    LongArray afterRefusal = new LongArray();
    for (Future<long[][]> f : steady) {
      long[][] latenciesAndDues = f.get();
      for (int i = 0; i < latenciesAndDues[0].length; i++) {
        all.add(latenciesAndDues[0][i]);
        boolean after = latenciesAndDues[1][i] > phase.firstRefusal.get();
        (after ? afterRefusal : beforeRefusal).add(latenciesAndDues[0][i]);
      }
    }
    for (Future<?> f : floods) {
      f.get();
    }
    phase.seconds = (System.nanoTime() - start) / 1e9;
    phase.cpu = Cpu.now(service).minus(before);
    pool.shutdown();
    phase.othersNanos = sorted(all);
    phase.othersBeforeRefusalNanos = sorted(beforeRefusal);
    phase.othersAfterRefusalNanos = sorted(afterRefusal);
    if (name.equals("warm-up")) {
      System.out.printf(
          "  warm-up: others p99 %.2f ms; flood %.0f requests/s (%d admitted, %d refused)%n",
          phase.othersP99() / 1e6,
          phase.floodSent() / phase.seconds,
          phase.admitted.sum(),
          phase.refused.sum());
    } else {
      System.out.printf(
          "  %s: others p99 %.2f ms over %d payments; flood %.0f requests/s; load average %s%n",
          name,
          phase.othersP99() / 1e6,
          phase.othersNanos.length,
          phase.floodSent() / phase.seconds,
          loadAverage());
      if (phase.firstRefusal.get() != Long.MAX_VALUE) {
        System.out.printf(
            "    the flooder's first 429 after %.1f s; the others' p99 before it %.2f ms (%d"
                + " payments), after it %.2f ms (%d payments)%n",
            (phase.firstRefusal.get() - start) / 1e9,
            FloodPhase.percentile(phase.othersBeforeRefusalNanos, 0.99) / 1e6,
            phase.othersBeforeRefusalNanos.length,
            FloodPhase.percentile(phase.othersAfterRefusalNanos, 0.99) / 1e6,
            phase.othersAfterRefusalNanos.length);
      }
    }
    return phase;
  }

  /** The machine's load average (1, 5, 15 minutes): other work on the two cores shows here. */
  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "n/a";
    }
  }

  private static long[] sorted(LongArray values) {
    long[] a = values.toArray();
    Arrays.sort(a);
    return a;
  }

  /**
   * One other tenant: a payment every {@code 1/otherRate} s; answers the latencies, each from when
   * its request was due, and those due times.
   */
  private long[][] steady(String tenant, long first, AtomicBoolean stop, FloodPhase phase)
      throws InterruptedException {
    LongArray latencies = new LongArray();
    LongArray dues = new LongArray();
    long interval = TimeUnit.SECONDS.toNanos(1) / otherRate;
    long due = first;
    while (!stop.get()) {
      long wait = due - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
      String key = newKey(tenant, phase.name);
      String body = HttpBenchmark.paymentBody(key);
      HttpResponse<String> r = send(tenant, key, body, phase.errors);
      long latency = System.nanoTime() - due;
      due += interval;
      if (r == null) {
        continue;
      }
      if (r.statusCode() != 201 || r.headers().firstValue("Idempotent-Replayed").isPresent()) {
        phase.errors.add(tenant + " status " + r.statusCode(), r.body());
        continue;
      }
      acknowledge(tenant, key, r);
      latencies.add(latency);
      dues.add(due - interval);
    }
    return new long[][] {latencies.toArray(), dues.toArray()};
  }

  private void flood(
      Flood flood,
      String tenant,
      Paid retried,
      long first,
      long interval,
      AtomicBoolean stop,
      FloodPhase phase)
      throws InterruptedException {
    long due = first;
    while (!stop.get()) {
      if (interval > 0) {
        long wait = due - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        due += interval;
      }
      if (flood == Flood.NEW) {
        String key = newKey("flood", phase.name);
        HttpResponse<String> r =
            sendAs(
                apiKey(tenant), key, HttpBenchmark.paymentBody(key), phase.errors, FLOOD_TIMEOUT);
        if (r == null) {
          continue;
        }
        if (r.statusCode() == 201) {
          acknowledge(tenant, key, r);
          phase.admitted.increment();
        } else if (isBusy(r)) {
          phase.busy.increment();
        } else if (isRefusal(r)) {
          phase.refused.increment();
          phase.firstRefusal.accumulateAndGet(System.nanoTime(), Math::min);
        } else {
          phase.errors.add("flooder status " + r.statusCode(), r.body());
        }
      } else {
        HttpResponse<String> r =
            sendAs(retried.apiKey(), retried.key(), retried.body(), phase.errors, FLOOD_TIMEOUT);
        if (r == null) {
          continue;
        }
        if (r.statusCode() == 201
            && r.headers().firstValue("Idempotent-Replayed").equals(Optional.of("true"))
            && r.body().equals(retried.answer())) {
          phase.admitted.increment();
        } else if (isBusy(r)) {
          phase.busy.increment();
        } else {
          phase.errors.add("retry status " + r.statusCode(), r.body());
        }
      }
    }
  }

  /**
   * Refused without being looked at: all the tenant's places taken ({@code --bulkhead}), or over
   * the service's per-tenant rate limit ({@code payments.rate-limit-per-second}, its API gate).
   */
  private static boolean isBusy(HttpResponse<String> r) {
    return r.statusCode() == 429
        && (r.body().contains("running at once") || r.body().contains("RATE_LIMITED"))
        && r.headers().firstValue("Retry-After").isPresent();
  }

  private static boolean isRefusal(HttpResponse<String> r) {
    return r.statusCode() == 429
        && r.body().contains("IDEMPOTENCY_QUOTA_EXCEEDED")
        && r.headers().firstValue("Retry-After").isPresent();
  }

  /** Pays once with a fresh key as {@code tenant}: the key its retries will send. */
  Paid pay(String tenant) throws Exception {
    String key = newKey(tenant, "retried");
    String body = HttpBenchmark.paymentBody(key);
    Errors errors = new Errors();
    HttpResponse<String> r = send(tenant, key, body, errors);
    if (r == null || r.statusCode() != 201) {
      errors.printIfAny("the first payment of " + tenant);
      throw new IllegalStateException(
          "the first payment of " + tenant + " was not made: " + (r == null ? "" : r.body()));
    }
    acknowledge(tenant, key, r);
    return new Paid(apiKey(tenant), key, body, r.body());
  }

  private void acknowledge(String tenant, String key, HttpResponse<String> r) {
    String location = r.headers().firstValue("Location").orElse("");
    acknowledged.add(
        new Acknowledged(tenant, key, location.substring(location.lastIndexOf('/') + 1)));
  }

  private String newKey(String who, String phase) {
    return who + "-" + runId + "-" + phase + "-" + sequence.incrementAndGet();
  }

  private HttpResponse<String> send(String tenant, String key, String body, Errors errors)
      throws InterruptedException {
    return sendAs(apiKey(tenant), key, body, errors, Duration.ofSeconds(30));
  }

  private HttpResponse<String> sendAs(
      String apiKey, String key, String body, Errors errors, Duration timeout)
      throws InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(payments)
            .timeout(timeout)
            .header("Authorization", "Bearer " + apiKey)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    try {
      return clients
          .computeIfAbsent(apiKey, k -> PaymentsServiceProcess.client())
          .send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      errors.add("I/O error " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
      return null;
    }
  }
}
