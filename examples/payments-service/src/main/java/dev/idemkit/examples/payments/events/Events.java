package dev.idemkit.examples.payments.events;

import dev.idemkit.outbox.NewEvent;
import dev.idemkit.outbox.Outbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import tools.jackson.databind.json.JsonMapper;

/**
 * Appends domain events to the outbox in the current Spring transaction (the phase's, or the
 * idempotent handler's), so an event commits exactly when the rows it describes do. A payload is a
 * JSON object of strings, its keys sorted: the same event is always the same text.
 */
@Component
public class Events {

  private final Outbox outbox;
  private final DataSource dataSource;
  private final JsonMapper json;

  public Events(Outbox outbox, DataSource dataSource, JsonMapper json) {
    this.outbox = outbox;
    this.dataSource = dataSource;
    this.json = json;
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
      String body = json.writeValueAsString(new TreeMap<>(payload));
      outbox.append(c, new NewEvent(type, tenant, aggregateType, aggregateId, causeKey, body));
    } catch (SQLException e) {
      throw new IllegalStateException("Could not append " + type + " to the outbox", e);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }
}
