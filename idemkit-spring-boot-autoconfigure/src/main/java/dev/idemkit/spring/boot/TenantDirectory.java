package dev.idemkit.spring.boot;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Which shard holds each tenant: the rows of {@code idemkit_tenant_shard} on the directory shard,
 * read into memory at start-up and again every {@code refresh} in the background, so that routing a
 * request runs no statement. A tenant with no row lives on its {@link #hashed hashed} shard (the
 * rendezvous hash of tenant and shard names), which is stable while the shards stay the same:
 * before a shard is added, {@link #pinEveryTenant()} writes a row for every tenant that has
 * records, so none of them follows the hash to the new shard. Rows are written by {@link
 * #pinEveryTenant()} and {@link TenantMove} only, never on a request's path.
 */
public final class TenantDirectory extends PollingLifecycle {

  /** A tenant's state: its requests are served, or refused with 503 while it moves. */
  public enum State {
    ACTIVE,
    MOVING
  }

  /** Where a tenant is. {@code version}: 0 for a tenant with no row, +1 at each change. */
  public record Placement(String shard, State state, long version) {}

  private static final String SCHEMA =
      """
      create table if not exists idemkit_tenant_shard (
          tenant  text   collate "C" primary key,
          shard   text   not null,
          state   text   not null check (state in ('ACTIVE', 'MOVING')),
          target  text,
          version bigint not null
      )
      """;

  private static final String ALL =
      "select tenant, shard, state, version from idemkit_tenant_shard";

  private static final String TENANTS_WITH_RECORDS = "select distinct tenant from idemkit_record";

  private static final String PIN =
      """
      insert into idemkit_tenant_shard (tenant, shard, state, version)
      values (?, ?, 'ACTIVE', 1)
      on conflict (tenant) do nothing
      """;

  private final TenantShards shards;
  private final String directoryShard;
  private volatile Map<String, Placement> placements = Map.of();

  /**
   * Creates the directory table if missing and reads it.
   *
   * @param directoryShard the shard that holds the table; null: the first by name
   */
  public TenantDirectory(TenantShards shards, String directoryShard, Duration refresh) {
    super("idemkit-tenant-directory", positive(refresh), refresh);
    this.shards = shards;
    this.directoryShard = directoryShard == null ? shards.names().get(0) : directoryShard;
    try (Connection c = directory().getConnection();
        Statement s = c.createStatement()) {
      s.execute(SCHEMA);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "Cannot create the tenant directory on shard " + this.directoryShard, e);
    }
    refresh();
  }

  private static Duration positive(Duration refresh) {
    if (refresh == null || refresh.isNegative() || refresh.isZero()) {
      throw new IllegalArgumentException(
          "idemkit.shards-directory-refresh must be positive: " + refresh);
    }
    return refresh;
  }

  /** The shard that holds the directory. */
  public String directoryShard() {
    return directoryShard;
  }

  /** The DataSource of the directory shard. */
  DataSource directory() {
    return shards.shard(directoryShard);
  }

  /** Where {@code tenant} is, as this instance last read it; no statement. */
  public Placement placement(String tenant) {
    Placement listed = placements.get(tenant);
    return listed != null ? listed : new Placement(hashed(tenant), State.ACTIVE, 0);
  }

  /**
   * The shard of a tenant with no row: of all shards, of every region ({@link
   * TenantShards#world()}), the one whose name scores highest with the tenant.
   */
  public String hashed(String tenant) {
    String best = null;
    long bestScore = 0;
    for (String shard : shards.world()) {
      long score = score(tenant, shard);
      if (best == null || Long.compareUnsigned(score, bestScore) > 0) {
        best = shard;
        bestScore = score;
      }
    }
    return best;
  }

  private static long score(String tenant, String shard) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(tenant.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      sha.update(shard.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.wrap(sha.digest()).getLong();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every JDK has SHA-256", e);
    }
  }

  /** Reads the whole directory now. */
  public void refresh() {
    Map<String, Placement> read = new HashMap<>();
    try (Connection c = directory().getConnection();
        Statement s = c.createStatement();
        ResultSet rows = s.executeQuery(ALL)) {
      while (rows.next()) {
        read.put(
            rows.getString(1),
            new Placement(rows.getString(2), State.valueOf(rows.getString(3)), rows.getLong(4)));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "Cannot read the tenant directory on shard " + directoryShard, e);
    }
    placements = Map.copyOf(read);
  }

  /**
   * Writes a row for every tenant with records on a shard and none in the directory, naming the
   * shard it is on: run it before adding a shard, so that no tenant follows the hash elsewhere.
   *
   * @return how many tenants it pinned
   */
  public int pinEveryTenant() throws SQLException {
    int pinned = 0;
    try (Connection dir = directory().getConnection()) {
      for (String shard : shards.names()) {
        List<String> tenants = tenantsWithRecords(shards.shard(shard));
        try (PreparedStatement pin = dir.prepareStatement(PIN)) {
          for (String tenant : tenants) {
            pin.setString(1, tenant);
            pin.setString(2, shard);
            pinned += pin.executeUpdate();
          }
        }
      }
    }
    refresh();
    return pinned;
  }

  private static List<String> tenantsWithRecords(DataSource shard) throws SQLException {
    try (Connection c = shard.getConnection();
        Statement s = c.createStatement();
        ResultSet rows = s.executeQuery(TENANTS_WITH_RECORDS)) {
      List<String> tenants = new ArrayList<>();
      while (rows.next()) {
        tenants.add(rows.getString(1));
      }
      return tenants;
    }
  }

  @Override
  void runOnce() {
    refresh();
  }

  @Override
  String failedRun() {
    return "Tenant directory not read; routing goes on with the last one read";
  }
}
