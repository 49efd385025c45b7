package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import org.junit.jupiter.api.Test;

/**
 * Named parameters: what becomes a {@code ?} and what stays text, and that a name binds every place
 * it stands, on the embedded PostgreSQL.
 */
class NamedSqlIT {

  @Test
  void namesBecomePlaceholdersAndCastsLiteralsIdentifiersAndCommentsStayAsWritten() {
    NamedSql sql =
        NamedSql.of(
            """
            select :a::text, ':b', "c:d", x::int -- :e
            from t where y = :f_2 and z = :a
            """);

    assertThat(sql.sql())
        .isEqualTo(
            """
            select ?::text, ':b', "c:d", x::int -- :e
            from t where y = ? and z = ?
            """);
  }

  @Test
  void aStatementWithAPositionalParameterIsRefused() {
    assertThatThrownBy(() -> NamedSql.of("select * from t where a = :a and b = ?"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theCommitTravelsAfterTheWholeStatement() {
    assertThat(NamedSql.of("update t set a = :a\n").andCommit().sql())
        .isEqualTo("update t set a = ?\n;\ncommit");
  }

  @Test
  void aNameBindsEveryPlaceItStandsAndAnUnknownNameIsRefused() throws Exception {
    NamedSql sql =
        NamedSql.of("select cast(:n as int) + cast(:n as int), cast(:s as text), :flag::boolean");
    try (Connection c = TestDatabase.embedded().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql.sql())) {
      NamedSql.Parameters p = sql.bind(ps).set("n", 20).set("s", (String) null);
      p.set("flag", true);
      assertThatThrownBy(() -> p.set("m", 1))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(":m");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(40);
        assertThat(rs.getString(2)).isNull();
        assertThat(rs.getBoolean(3)).isTrue();
      }
    }
  }
}
