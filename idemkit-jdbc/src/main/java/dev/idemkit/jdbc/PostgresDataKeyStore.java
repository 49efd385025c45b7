package dev.idemkit.jdbc;

import dev.idemkit.spi.DataKeyStore;
import dev.idemkit.spi.StoreTransaction;
import dev.idemkit.spi.WrappedDataKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import javax.sql.DataSource;

/**
 * Tenant data keys in {@code idemkit_data_key}, wrapped. Reads and inserts for a request run on the
 * request's own transaction (its connection), never on a second pooled connection: with every
 * connection held by a request, a second one would never come. Administration (rotation, shredding,
 * re-wrapping) runs in short auto-commit statements of its own. Calls are rare: unwrapped keys are
 * cached by the engine's keyring.
 */
public final class PostgresDataKeyStore implements DataKeyStore {

  private static final String CURRENT =
      """
      select tenant, key_id, master_key_id, wrapped_key, created_at from idemkit_data_key
      where tenant = ? order by created_at desc, key_id desc limit 1
      """;

  private static final String FIND =
      """
      select tenant, key_id, master_key_id, wrapped_key, created_at from idemkit_data_key
      where tenant = ? and key_id = ?
      """;

  /**
   * A new key, made at the database's time ({@code statement_timestamp()}, as every time the record
   * store compares), or at the test clock's when one is set. The key's own {@code createdAt}, an
   * instance's clock, is not stored: a tenant's newest key is the one that seals ({@link
   * #CURRENT}), so an instance whose clock runs behind would rotate to a key older than the current
   * one and keep sealing with the old key, and one ahead would pin its key as the newest.
   */
  private static final String INSERT =
      """
      insert into idemkit_data_key (tenant, key_id, master_key_id, wrapped_key, created_at)
      values (?, ?, ?, ?, coalesce(cast(? as timestamptz), statement_timestamp()))
      """;

  private static final String REWRAP =
      """
      update idemkit_data_key set master_key_id = ?, wrapped_key = ?, rewrapped_at = now()
      where tenant = ? and key_id = ?
      """;

  private static final String ALL =
      """
      select tenant, key_id, master_key_id, wrapped_key, created_at from idemkit_data_key
      order by tenant, created_at
      """;

  private static final String DESTROY = "delete from idemkit_data_key where tenant = ?";

  private static final String MASTER_KEY_IDS =
      "select distinct master_key_id from idemkit_data_key order by master_key_id";

  private final DataSource dataSource;

  /** The test seam: when set, new keys are made at its time instead of the database's. */
  private final Clock clock;

  /** Keys made at the database's time, one clock for every instance. */
  public PostgresDataKeyStore(DataSource dataSource) {
    this(dataSource, null);
  }

  /**
   * Keys made at {@code clock}'s time instead of the database's: a seam for tests, as {@link
   * PostgresIdempotencyStore.Builder#clock} is for the record store.
   *
   * @param clock the time new keys are made at, or {@code null} for the database's
   */
  public PostgresDataKeyStore(DataSource dataSource, Clock clock) {
    this.dataSource = dataSource;
    this.clock = clock;
  }

  @Override
  public Optional<WrappedDataKey> current(StoreTransaction tx, String tenant) {
    return query(tx, CURRENT, tenant).stream().findFirst();
  }

  @Override
  public Optional<WrappedDataKey> find(StoreTransaction tx, String tenant, String keyId) {
    return query(tx, FIND, tenant, keyId).stream().findFirst();
  }

  @Override
  public void insert(StoreTransaction tx, WrappedDataKey key) {
    update(
        tx,
        INSERT,
        key.tenant(),
        key.keyId(),
        key.masterKeyId(),
        key.wrapped(),
        clock == null ? null : clock.instant().toString());
  }

  @Override
  public void rewrap(String tenant, String keyId, String masterKeyId, byte[] wrapped) {
    update(null, REWRAP, masterKeyId, wrapped, tenant, keyId);
  }

  @Override
  public List<WrappedDataKey> all() {
    return query(null, ALL);
  }

  @Override
  public int destroy(String tenant) {
    return update(null, DESTROY, tenant);
  }

  /**
   * The ids of the master keys that wrap at least one data key: each must stay available to the key
   * provider until {@link dev.idemkit.DataProtection#rewrapDataKeys(String)} has moved its data
   * keys to another.
   */
  public Set<String> masterKeyIds() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(MASTER_KEY_IDS);
        ResultSet rs = ps.executeQuery()) {
      Set<String> ids = new TreeSet<>();
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
      return ids;
    } catch (SQLException e) {
      throw new IdempotencyStoreException("Could not read tenant data keys", e);
    }
  }

  private List<WrappedDataKey> query(StoreTransaction tx, String sql, Object... params) {
    Connection own = null;
    try {
      Connection c = tx != null ? tx.unwrap(Connection.class) : (own = dataSource.getConnection());
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        bind(ps, params);
        List<WrappedDataKey> keys = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            keys.add(
                new WrappedDataKey(
                    rs.getString("tenant"),
                    rs.getString("key_id"),
                    rs.getString("master_key_id"),
                    rs.getBytes("wrapped_key"),
                    rs.getTimestamp("created_at").toInstant()));
          }
        }
        return keys;
      }
    } catch (SQLException e) {
      throw new IdempotencyStoreException("Could not read tenant data keys", e);
    } finally {
      close(own);
    }
  }

  private int update(StoreTransaction tx, String sql, Object... params) {
    Connection own = null;
    try {
      Connection c = tx != null ? tx.unwrap(Connection.class) : (own = dataSource.getConnection());
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        bind(ps, params);
        return ps.executeUpdate();
      }
    } catch (SQLException e) {
      throw new IdempotencyStoreException("Could not write tenant data keys", e);
    } finally {
      close(own);
    }
  }

  private static void close(Connection own) {
    if (own != null) {
      try {
        own.close();
      } catch (SQLException e) {
        // nothing to do: the statement's outcome is known
      }
    }
  }

  private static void bind(PreparedStatement ps, Object... params) throws SQLException {
    for (int i = 0; i < params.length; i++) {
      if (params[i] == null) {
        ps.setNull(i + 1, Types.VARCHAR); // the statement casts it
      } else {
        ps.setObject(i + 1, params[i]);
      }
    }
  }
}
