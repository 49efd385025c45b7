package dev.idemkit.spring.boot;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The application's DataSource when tenants live on shards ({@code idemkit.shards.<name>.*}): each
 * connection comes from the shard bound to the asking thread, so business statements, the
 * idempotency record and the outbox of one request share one transaction on the tenant's shard.
 *
 * <p>A web request is bound to its tenant's shard before its handler (and so before any
 * transaction) starts, and unbound after; a worker or a consumer binds itself with {@link #on}.
 * Asking for a connection with no shard bound is an {@link IllegalStateException}, never a silent
 * default: a statement on the wrong shard would answer a retry as if its key were new.
 *
 * <p><b>Regions</b> (docs/regions.md): each shard may name the region its database lives in, and
 * this instance names its own. A shard of another region is in the world (its name counts for the
 * hashed placement, its tenants are redirected to its region) but is served there: this instance
 * runs no worker, schema or request on it, and has no pool for it unless the directory lives there.
 * Without regions every shard is this instance's.
 */
public final class TenantShards extends AbstractRoutingDataSource implements AutoCloseable {

  private final Map<String, DataSource> shards;
  private final Map<String, String> regions;
  private final String self;
  private final ThreadLocal<String> current = new ThreadLocal<>();

  /** {@code shards}: each shard's own DataSource (a pool), by name; at least one. No regions. */
  public TenantShards(Map<String, DataSource> shards) {
    this(shards, Map.of(), null);
  }

  /**
   * Shards in regions.
   *
   * @param shards the DataSource (a pool) of each shard this instance connects to, by name: every
   *     shard of its region, and another region's shard only if it holds the directory
   * @param regions the region of every shard in the world, pooled here or not
   * @param self this instance's region; null: no regions ({@code regions} then empty)
   */
  public TenantShards(Map<String, DataSource> shards, Map<String, String> regions, String self) {
    if (shards.isEmpty()) {
      throw new IllegalArgumentException("idemkit.shards names no shard");
    }
    if (self == null ? !regions.isEmpty() : !regions.keySet().containsAll(shards.keySet())) {
      throw new IllegalArgumentException(
          "With idemkit.regions.self set, every shard names its region (idemkit.shards.<name>"
              + ".region), and only then: "
              + regions);
    }
    regions.forEach(
        (shard, region) -> {
          if (region.equals(self) && !shards.containsKey(shard)) {
            throw new IllegalArgumentException(
                "Shard " + shard + " is in this instance's region " + self + " but has no url");
          }
        });
    this.shards = new TreeMap<>(shards);
    this.regions = new TreeMap<>(regions);
    this.self = self;
    setTargetDataSources(new TreeMap<Object, Object>(shards));
    setLenientFallback(false);
    afterPropertiesSet();
  }

  /** The names of the shards this instance has a pool for, sorted. */
  public List<String> names() {
    return List.copyOf(shards.keySet());
  }

  /**
   * Every shard's name, sorted: {@link #names()} and, with regions, the other regions' shards with
   * no pool here. The hashed placement of an unlisted tenant is chosen among these, so every region
   * places it alike.
   */
  public List<String> world() {
    TreeSet<String> world = new TreeSet<>(shards.keySet());
    world.addAll(regions.keySet());
    return List.copyOf(world);
  }

  /**
   * The shards this instance serves, sorted: those of its region; without regions, all. Empty for a
   * region that holds no shard (after a failover moved its shards away): it only redirects.
   */
  public List<String> local() {
    return self == null
        ? names()
        : names().stream().filter(shard -> self.equals(regions.get(shard))).toList();
  }

  /** This instance's region; null without regions. */
  public String self() {
    return self;
  }

  /** The region of {@code shard}; null without regions. */
  public String region(String shard) {
    return regions.get(shard);
  }

  /** The DataSource of one shard, whatever is bound to the thread. */
  public DataSource shard(String name) {
    DataSource shard = shards.get(name);
    if (shard == null) {
      throw new IllegalArgumentException("No shard named " + name + "; shards: " + names());
    }
    return shard;
  }

  /** The shard bound to this thread, or null. */
  public String current() {
    return current.get();
  }

  /**
   * Runs {@code work} with {@code shard} bound to this thread, then restores what was bound.
   *
   * @throws IllegalStateException if a transaction on another shard is open on this thread: its
   *     connection would be handed to {@code work} whatever shard it names
   */
  public <T> T on(String shard, Callable<T> work) throws Exception {
    String before = bind(shard);
    try {
      return work.call();
    } finally {
      restore(before);
    }
  }

  /** {@link #on(String, Callable)} for work that returns nothing and throws nothing checked. */
  public void on(String shard, Runnable work) {
    String before = bind(shard);
    try {
      work.run();
    } finally {
      restore(before);
    }
  }

  /** Binds {@code shard} to this thread; answers what was bound before (null: nothing). */
  String bind(String shard) {
    shard(shard);
    String before = current.get();
    if (before != null
        && !before.equals(shard)
        && TransactionSynchronizationManager.hasResource(this)) {
      throw new IllegalStateException(
          "A transaction on shard "
              + before
              + " is open on this thread; cannot switch to "
              + shard);
    }
    current.set(shard);
    return before;
  }

  /** Binds {@code before} again (null: unbinds). */
  void restore(String before) {
    if (before == null) {
      current.remove();
    } else {
      current.set(before);
    }
  }

  @Override
  protected Object determineCurrentLookupKey() {
    String shard = current.get();
    if (shard == null) {
      throw new IllegalStateException(
          "No shard is bound to this thread: a request is bound to its tenant's shard once its"
              + " tenant is known, and other work names its shard with TenantShards.on(shard, ...)"
              + " (shards: "
              + names()
              + ")");
    }
    return shard;
  }

  /**
   * The databases behind {@code dataSource}: every shard a {@link TenantShards} serves ({@link
   * #local()}), else {@code dataSource} itself. For start-up work (schema, checks) that runs once
   * per database.
   */
  static List<DataSource> each(DataSource dataSource) {
    return dataSource instanceof TenantShards shards
        ? shards.local().stream().map(shards::shard).toList()
        : List.of(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * Applies {@code flyway}'s migrations (the application's own) to every shard it serves ({@link
   * #local()}), with its configuration and each shard's DataSource: Spring Boot runs Flyway on the
   * application's DataSource only, so with shards the application hands this to Boot as its
   * migration strategy ({@code @Bean FlywayMigrationStrategy perShard(TenantShards shards) { return
   * shards::migrateEach; }}).
   *
   * @return how many migrations were applied, all shards together
   */
  public int migrateEach(Flyway flyway) {
    int applied = 0;
    for (DataSource shard : each(this)) {
      applied +=
          Flyway.configure()
              .configuration(flyway.getConfiguration())
              .dataSource(shard)
              .load()
              .migrate()
              .migrationsExecuted;
    }
    return applied;
  }

  /** Closes the shards' pools. */
  @Override
  public void close() throws Exception {
    for (DataSource shard : shards.values()) {
      if (shard instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }
}
