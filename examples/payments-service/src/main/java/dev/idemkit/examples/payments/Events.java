package dev.idemkit.examples.payments;

import dev.idemkit.internal.Json;
import dev.idemkit.outbox.NewEvent;
import dev.idemkit.outbox.Outbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Appends domain events to the outbox in the current Spring transaction (the phase's, or the
 * idempotent handler's), so an event commits exactly when the rows it describes do.
 */
@Component
public class Events {

  private final Outbox outbox;
  private final DataSource dataSource;

  public Events(Outbox outbox, DataSource dataSource) {
    this.outbox = outbox;
    this.dataSource = dataSource;
  }

  /**
   * Appends {@code type} for the aggregate, with an id derived from the tenant, {@code causeKey}
   * and the type: writing the same event again (a retry, a recovery) keeps one.
   */
  public void append(
      String type,
      String tenant,
      String aggregateType,
      String aggregateId,
      String causeKey,
      Map<String, String> payload) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      throw new IllegalStateException(type + " must be appended inside a transaction");
    }
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      outbox.append(
          c, new NewEvent(type, tenant, aggregateType, aggregateId, causeKey, Json.write(payload)));
    } catch (SQLException e) {
      throw new IllegalStateException("Could not append " + type + " to the outbox", e);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }
}
