package dev.idemkit.jdbc;

import dev.idemkit.DataProtection;
import dev.idemkit.StaticKeyProvider;
import dev.idemkit.spi.IdempotencyStore;
import java.time.Clock;
import java.util.Map;
import javax.sql.DataSource;

/** The whole store contract again, with answers and recovery data encrypted at rest. */
class EncryptedPostgresStoreIT extends PostgresContract {
  @Override
  protected DataSource dataSource() {
    return TestDatabase.embedded().dataSource();
  }

  @Override
  protected IdempotencyStore createStore(Clock clock) {
    DataProtection protection =
        DataProtection.builder()
            .encryption(
                StaticKeyProvider.ofBase64(Map.of("mk1", StaticKeyProvider.newKeyBase64()), "mk1"),
                new PostgresDataKeyStore(dataSource()))
            .clock(clock)
            .build();
    return protection.protect(super.createStore(clock));
  }
}
