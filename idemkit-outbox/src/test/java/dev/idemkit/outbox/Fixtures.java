package dev.idemkit.outbox;

import dev.idemkit.outbox.spi.MessageReceiver;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.function.Predicate;
import javax.sql.DataSource;

/** Shared pieces of the tests: appending in a transaction, and a ledger-writing handler. */
final class Fixtures {

  private Fixtures() {}

  static NewEvent paymentCompleted(String paymentId, long amount) {
    return new NewEvent(
        "PaymentCompleted",
        "tenant-a",
        "payment",
        paymentId,
        "complete:" + paymentId,
        "{\"paymentId\":\"" + paymentId + "\",\"amount\":" + amount + "}");
  }

  static Outbox.Appended appendCommitted(Outbox outbox, NewEvent e) {
    try (Connection c = TestPostgres.dataSource().getConnection()) {
      c.setAutoCommit(false);
      Outbox.Appended a = outbox.append(c, e);
      c.commit();
      return a;
    } catch (Exception ex) {
      throw new IllegalStateException(ex);
    }
  }

  /**
   * A consumer's handler: writes a ledger row in the inbox's transaction; fails while {@code
   * poison} says so. The ledger table has no unique constraint: a second ledger row can only come
   * from a second application.
   */
  static MessageHandler ledger(String consumer, Predicate<EventEnvelope> poison) {
    return (tx, m) -> {
      if (poison.test(m)) {
        throw new IllegalArgumentException("poison: " + m.eventId());
      }
      try (PreparedStatement s =
          tx.prepareStatement(
              "insert into test_ledger (consumer, payment_id, amount) values (?, ?, ?)")) {
        s.setString(1, consumer);
        s.setString(2, m.aggregateId());
        s.setLong(3, m.sequence());
        s.executeUpdate();
      }
    };
  }

  /**
   * Wraps a receiver so that every message delivered to it is counted in {@code test_received}
   * (committed on its own, before the inbox sees it): deliveries, duplicates included.
   */
  static MessageReceiver counting(MessageReceiver inner, DataSource ds) {
    return new MessageReceiver() {
      @Override
      public String consumerName() {
        return inner.consumerName();
      }

      @Override
      public List<Received> receive(List<EventEnvelope> messages) {
        for (EventEnvelope m : messages) {
          recordSeen(ds, inner.consumerName(), m);
        }
        return inner.receive(messages);
      }
    };
  }

  static void recordSeen(DataSource ds, String consumer, EventEnvelope m) {
    try (Connection c = ds.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "insert into test_received (consumer, message_id, aggregate_id, sequence)"
                    + " values (?, ?, ?, ?)")) {
      s.setString(1, consumer);
      s.setObject(2, m.eventId());
      s.setString(3, m.aggregateId());
      s.setLong(4, m.sequence());
      s.executeUpdate();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
