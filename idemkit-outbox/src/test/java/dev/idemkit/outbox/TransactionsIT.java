package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.outbox.support.Transactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The transaction template on PostgreSQL: what it leaves committed, and what it leaves behind. */
class TransactionsIT {

  private final DataSource db = TestPostgres.dataSource();

  @BeforeEach
  void table() {
    TestPostgres.execute("create table if not exists tx_probe (id int primary key)");
    TestPostgres.execute("truncate tx_probe");
  }

  @Test
  void commitsWhatTheWorkWroteAndRestoresAutoCommit() throws Exception {
    int answered = Transactions.inTransaction(db, c -> insert(c, 1) + insert(c, 2));

    assertThat(answered).isEqualTo(2);
    assertThat(TestPostgres.count("select count(*) from tx_probe")).isEqualTo(2);
    try (HikariDataSource one = TestPostgres.pool(TestPostgres.jdbcUrl(), 1)) {
      Transactions.inTransaction(one, c -> insert(c, 3));
      try (Connection c = one.getConnection()) {
        assertThat(c.getAutoCommit()).isTrue();
      }
    }
  }

  @Test
  void rollsBackWhenTheWorkThrowsAnErrorTooAndRethrowsIt() {
    Transactions.Work<Integer, RuntimeException> bug =
        c -> {
          insert(c, 1);
          throw new AssertionError("the work's bug");
        };
    assertThatThrownBy(() -> Transactions.inTransaction(db, bug))
        .isInstanceOf(AssertionError.class)
        .hasMessage("the work's bug");
    // The same key twice: the second insert fails.
    assertThatThrownBy(() -> Transactions.inTransaction(db, c -> insert(c, 2) + insert(c, 2)))
        .isInstanceOf(SQLException.class);

    assertThat(TestPostgres.count("select count(*) from tx_probe")).isZero();
  }

  @Test
  void aConnectionLostInTheWorkSurfacesAsTheRollbacksFailureWithTheWorksAttached() {
    Transactions.Work<Integer, RuntimeException> lost =
        c -> {
          insert(c, 1);
          int pid;
          try (Statement s = c.createStatement();
              var rs = s.executeQuery("select pg_backend_pid()")) {
            rs.next();
            pid = rs.getInt(1);
          }
          TestPostgres.execute("select pg_terminate_backend(" + pid + ")");
          return insert(c, 2); // on a session the database ended
        };
    assertThatThrownBy(() -> Transactions.inTransaction(db, lost))
        .isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).isNotEmpty());

    assertThat(TestPostgres.count("select count(*) from tx_probe")).isZero();
  }

  private static int insert(Connection c, int id) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("insert into tx_probe (id) values (?)")) {
      s.setInt(1, id);
      return s.executeUpdate();
    }
  }
}
