package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The transaction template on PostgreSQL: what it leaves committed, and what it leaves behind. */
class TransactionsIT {

  private final DataSource db = TestDatabase.embedded().dataSource();

  @BeforeEach
  void table() {
    TestDatabase.execute(db, "create table if not exists tx_probe (id int primary key)");
    TestDatabase.execute(db, "truncate tx_probe");
  }

  @Test
  void commitsWhatTheWorkWroteAndRestoresAutoCommit() throws Exception {
    int answered = Transactions.inTransaction(db, c -> insert(c, 1) + insert(c, 2));

    assertThat(answered).isEqualTo(2);
    assertThat(probes()).isEqualTo(2);
    // A pool of two with one held: the transaction and the check after it get the same connection.
    try (IdemkitDatabase two = TestDatabase.freshSchema(2);
        Connection held = two.dataSource().getConnection()) {
      TestDatabase.execute(two.dataSource(), "create table tx_probe (id int primary key)");
      Transactions.inTransaction(two.dataSource(), c -> insert(c, 3));
      try (Connection c = two.dataSource().getConnection()) {
        assertThat(c.getAutoCommit()).isTrue();
      }
    }
  }

  @Test
  void rollsBackWhenTheWorkThrowsAnErrorTooAndRethrowsIt() throws Exception {
    Transactions.Work<Integer, RuntimeException> bug =
        c -> {
          insert(c, 1);
          throw new AssertionError("the work's bug");
        };
    assertThatThrownBy(() -> Transactions.inTransaction(db, bug))
        .isInstanceOf(AssertionError.class)
        .hasMessage("the work's bug")
        .satisfies(e -> assertThat(e.getSuppressed()).isEmpty());
    // The same key twice: the second insert fails.
    assertThatThrownBy(() -> Transactions.inTransaction(db, c -> insert(c, 2) + insert(c, 2)))
        .isInstanceOf(SQLException.class);

    assertThat(probes()).isZero();
  }

  @Test
  void aConnectionLostInTheWorkPropagatesTheWorksFailureWithTheRollbacksAttached()
      throws Exception {
    AtomicReference<SQLException> workFailed = new AtomicReference<>();
    Transactions.Work<Integer, RuntimeException> lost =
        c -> {
          insert(c, 1);
          int pid;
          try (Statement s = c.createStatement();
              ResultSet rs = s.executeQuery("select pg_backend_pid()")) {
            rs.next();
            pid = rs.getInt(1);
          }
          TestDatabase.execute(db, "select pg_terminate_backend(" + pid + ")");
          try {
            return insert(c, 2); // on a session the database ended
          } catch (SQLException e) {
            workFailed.set(e);
            throw e;
          }
        };

    assertThatThrownBy(() -> Transactions.inTransaction(db, lost))
        .satisfies(e -> assertThat(e).isSameAs(workFailed.get()))
        .satisfies(
            e ->
                assertThat(e.getSuppressed())
                    .as("the rollback's failure")
                    .singleElement()
                    .isInstanceOf(SQLException.class));

    assertThat(probes()).isZero();
  }

  private int probes() throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select count(*) from tx_probe")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static int insert(Connection c, int id) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("insert into tx_probe (id) values (?)")) {
      s.setInt(1, id);
      return s.executeUpdate();
    }
  }
}
