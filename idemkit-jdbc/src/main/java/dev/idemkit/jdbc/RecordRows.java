package dev.idemkit.jdbc;

import dev.idemkit.Fingerprint;
import dev.idemkit.IdempotencyKey;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.RecordState;
import dev.idemkit.Scope;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.internal.Json;
import dev.idemkit.spi.Ownership;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Map;

/**
 * The store's statements' shared parameters (the clock, a record's key, its owner) and a record
 * read from a row of {@code idemkit_record}.
 */
final class RecordRows {

  private RecordRows() {}

  /**
   * The clock parameter, bound as text: a typed parameter lets the driver send the statement at
   * once, while an untyped NULL makes it ask the server first, and the implicit {@code BEGIN}
   * before the claim then costs a round trip of its own.
   */
  static NamedSql.Parameters bindNow(NamedSql.Parameters p, Clock clock) throws SQLException {
    return p.set("now", clock == null ? null : clock.instant().toString());
  }

  static NamedSql.Parameters bindKey(NamedSql.Parameters p, ScopedKey id) throws SQLException {
    return p.set("tenant", id.tenant())
        .set("operation", id.operation())
        .set("idem_key", id.key().value());
  }

  static NamedSql.Parameters bindOwner(NamedSql.Parameters p, Ownership owner) throws SQLException {
    return bindKey(p, owner.id()).set("fencing_token", owner.fencingToken());
  }

  /** How many rows {@code ps}'s query returns. */
  static int rows(PreparedStatement ps) throws SQLException {
    int n = 0;
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        n++;
      }
    }
    return n;
  }

  static IdempotencyRecord toRecord(ResultSet rs) throws SQLException {
    ScopedKey id =
        new ScopedKey(
            new Scope(rs.getString("tenant"), rs.getString("operation")),
            new IdempotencyKey(rs.getString("idem_key")));
    String data = rs.getString("recovery_data");
    byte[] body = rs.getBytes("response_body");
    StoredResponse response = null;
    if (body != null) {
      String headers = rs.getString("response_headers");
      response =
          new StoredResponse(
              rs.getInt("response_status"),
              headers == null ? Map.of() : Json.readStringMap(headers),
              body,
              rs.getInt("response_schema_version"),
              rs.getString("resource_id"));
    }
    return new IdempotencyRecord(
        id,
        Fingerprint.parse(rs.getString("fingerprint")),
        RecordState.valueOf(rs.getString("state")),
        rs.getLong("fencing_token"),
        instant(rs, "locked_until"),
        rs.getString("recovery_point"),
        rs.getString("pending_external"),
        data == null ? Map.of() : Json.readStringMap(data),
        rs.getInt("recovery_attempts"),
        response,
        instant(rs, "created_at"),
        instant(rs, "updated_at"),
        instant(rs, "expires_at"),
        instant(rs, "escalated_at"));
  }

  static Instant instant(ResultSet rs, String column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }
}
