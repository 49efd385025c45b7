package dev.idemkit.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.CallResult;
import dev.idemkit.DataProtection;
import dev.idemkit.Fingerprint;
import dev.idemkit.FingerprintRecipes;
import dev.idemkit.Idempotency;
import dev.idemkit.IdempotencyConfig;
import dev.idemkit.IdempotentRequest;
import dev.idemkit.JsonFieldRedactor;
import dev.idemkit.LocalOperation;
import dev.idemkit.OperationContext;
import dev.idemkit.OperationResult;
import dev.idemkit.OperatorResolution;
import dev.idemkit.Outcome;
import dev.idemkit.PhasedOperation;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.ScopedKey;
import dev.idemkit.StaticKeyProvider;
import dev.idemkit.Step;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.IdempotencyStore;
import dev.idemkit.spi.RecoveryAdministration;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Stored answers as sensitive data, on the embedded PostgreSQL: what the table's bytes hold, key
 * rotation and crypto-shredding, keyed fingerprints across recipe changes, redaction, replay modes
 * and schema upcasts. Each test has tenants of its own.
 */
class DataProtectionIT {

  private static final Duration TTL = Duration.ofHours(24);
  private static final String CARD = "4242424242424242";

  private final DataSource ds = TestDatabase.embedded().dataSource();
  private final PostgresDataKeyStore dataKeys = new PostgresDataKeyStore(ds);
  private final IdempotencyStore raw = PostgresIdempotencyStore.create(ds);
  private String tenant;

  @BeforeEach
  void tenant() {
    tenant = "t_" + UUID.randomUUID();
    TestDatabase.execute(
        ds, "create table if not exists data_protection_execution (tenant text not null)");
  }

  /**
   * Counts a run of a local operation in its own transaction, so that only runs that committed
   * count: a local operation's record is written last, and a retry that finds it has run and rolled
   * back.
   */
  private void executed(OperationContext ctx) throws Exception {
    try (PreparedStatement ps =
        ctx.unwrap(Connection.class)
            .prepareStatement("insert into data_protection_execution (tenant) values (?)")) {
      ps.setString(1, tenant);
      ps.executeUpdate();
    }
  }

  /** Committed runs of this test's operations. */
  private long executions() throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("select count(*) from data_protection_execution where tenant = ?")) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  // ---- encryption at rest -----------------------------------------------------------------

  @Test
  void theTableHoldsNoPlaintextAnswerNorRecoveryData() throws Exception {
    DataProtection protection = encrypted(Map.of("mk1", key()), "mk1");
    Idempotency idempotency = engine(protection);
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k1");
    PhasedOperation<Map<String, String>> op =
        PhasedOperation.builder()
            .local(
                "CREATED",
                (ctx, d) -> {
                  d.put("paymentId", "pay_secret_data_marker");
                  return Step.next(d);
                })
            .external(
                "CHARGED",
                call -> call.call((ctx, d) -> CallResult.applied(d)).farSideDeduplicatesByKey())
            .complete((ctx, d) -> OperationResult.success(answer("{\"card\":\"" + CARD + "\"}")));

    Outcome first = idempotency.execute(request(id, "10.00"), op);
    Outcome replay = idempotency.execute(request(id, "10.00"), op);

    assertThat(first).isInstanceOf(Outcome.Executed.class);
    assertThat(replay).isInstanceOf(Outcome.Replayed.class);
    assertThat(text(replay)).isEqualTo("{\"card\":\"" + CARD + "\"}");
    Map<String, Object> row = row(id);
    String body = new String((byte[]) row.get("response_body"), StandardCharsets.ISO_8859_1);
    assertThat(body).doesNotContain(CARD).doesNotContain("card");
    assertThat((String) row.get("recovery_data"))
        .doesNotContain("pay_secret_data_marker")
        .startsWith("{\"~sealed\":\"ik1:dk_");
    assertThat(row.get("response_key_id")).asString().startsWith("dk_");
    assertThat(row.get("recovery_key_id")).isEqualTo(row.get("response_key_id"));
    assertThat(dataKeysOf(tenant)).containsExactly(row.get("response_key_id") + "@mk1");
  }

  @Test
  void anOperatorsExternalReferenceIsSealedLikeTheRestOfTheRecoveryData() throws Exception {
    DataProtection protection = encrypted(Map.of("mk1", key()), "mk1");
    IdempotencyStore store = protection.protect(raw);
    Idempotency idempotency = engine(protection);
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k-resolved");
    String chargeRef = "ch_operator_marker_" + UUID.randomUUID();
    Outcome unknown =
        idempotency.execute(
            request(id, "7.00"), charge((ctx, d) -> CallResult.unknown("provider unreachable")));
    assertThat(unknown).isInstanceOf(Outcome.OutcomePending.class);

    assertThat(
            store
                .capability(RecoveryAdministration.class)
                .orElseThrow()
                .resolve(id, OperatorResolution.applied(chargeRef), "admin:alice", "seen"))
        .as("resolved through the protection, which seals the reference")
        .isTrue();
    assertThat((String) row(id).get("recovery_data")).doesNotContain(chargeRef);

    Optional<Outcome> recovered =
        idempotency.recover(
            id,
            charge(
                (ctx, d) -> {
                  d.put("chargeId", ctx.operatorResolution().orElseThrow().externalReference());
                  return CallResult.applied(d);
                }));
    assertThat(recovered).get().isInstanceOf(Outcome.Executed.class);
    assertThat(text(recovered.get())).isEqualTo("{\"chargeId\":\"" + chargeRef + "\"}");
    Map<String, Object> row = row(id);
    assertThat(row.get("state")).isEqualTo("COMPLETED");
    assertThat((String) row.get("recovery_data")).doesNotContain(chargeRef);
    assertThat(new String((byte[]) row.get("response_body"), StandardCharsets.ISO_8859_1))
        .doesNotContain(chargeRef);
  }

  private PhasedOperation<Map<String, String>> charge(
      dev.idemkit.PhasedOperation.Call<Map<String, String>> lookup) {
    return PhasedOperation.builder()
        .external(
            "CHARGED",
            call ->
                call.call(
                        (ctx, d) -> {
                          throw new java.io.IOException("connection reset after the request");
                        })
                    .lookup(lookup))
        .complete(
            (ctx, d) ->
                OperationResult.success(answer("{\"chargeId\":\"" + d.get("chargeId") + "\"}")));
  }

  @Test
  void aSealedBodyMovedToAnotherRecordDoesNotOpen() throws Exception {
    Idempotency idempotency = engine(encrypted(Map.of("mk1", key()), "mk1"));
    ScopedKey a = ScopedKey.of(tenant, "create_payment", "a");
    ScopedKey b = ScopedKey.of(tenant, "create_payment", "b");
    idempotency.execute(request(a, "10.00"), pay("{\"to\":\"alice\"}"));
    idempotency.execute(request(b, "10.00"), pay("{\"to\":\"bob\"}"));
    sql(
        "update idemkit_record set response_body = (select response_body from idemkit_record"
            + " where tenant = ? and idem_key = 'a') where tenant = ? and idem_key = 'b'",
        tenant,
        tenant);

    assertThatThrownBy(() -> idempotency.execute(request(b, "10.00"), pay("{}")))
        .isInstanceOfSatisfying(
            RecordUnreadableException.class,
            e -> assertThat(e.reason()).isEqualTo(RecordUnreadableException.Reason.TAMPERED));
    assertThat(executions()).isEqualTo(2);
  }

  @Test
  void masterKeyRotationKeepsRecordsOfBothGenerationsReplaying() throws Exception {
    // Master key ids of this test's own: the database holds other tests' keys too.
    String mk1Id = "mk1_" + tenant;
    String mk2Id = "mk2_" + tenant;
    byte[] mk1 = key();
    byte[] mk2 = key();
    String other = tenant + "_2";
    ScopedKey old = ScopedKey.of(tenant, "create_payment", "old");
    ScopedKey young = ScopedKey.of(other, "create_payment", "young");
    engine(encrypted(Map.of(mk1Id, mk1), mk1Id)).execute(request(old, "1.00"), pay("{\"g\":1}"));

    // The new master key is current; the old one still unwraps the keys it wrapped.
    DataProtection rotated = encrypted(Map.of(mk1Id, mk1, mk2Id, mk2), mk2Id);
    engine(rotated).execute(request(young, "2.00"), pay("{\"g\":2}"));
    assertThat(dataKeysOf(tenant)).allMatch(k -> k.endsWith("@" + mk1Id));
    assertThat(dataKeysOf(other)).allMatch(k -> k.endsWith("@" + mk2Id));
    assertThat(text(engine(rotated).execute(request(old, "1.00"), pay("{}"))))
        .isEqualTo("{\"g\":1}");
    assertThat(text(engine(rotated).execute(request(young, "2.00"), pay("{}"))))
        .isEqualTo("{\"g\":2}");

    // Re-wrapped under the new master key, the old one can go.
    assertThat(rotated.rewrapDataKeys(mk1Id)).isEqualTo(1);
    assertThat(dataKeysOf(tenant)).allMatch(k -> k.endsWith("@" + mk2Id));
    Idempotency onlyNew = engine(encrypted(Map.of(mk2Id, mk2), mk2Id));
    assertThat(text(onlyNew.execute(request(old, "1.00"), pay("{}")))).isEqualTo("{\"g\":1}");
    assertThat(text(onlyNew.execute(request(young, "2.00"), pay("{}")))).isEqualTo("{\"g\":2}");
    assertThat(executions()).isEqualTo(2);
  }

  /**
   * A master key configured under its id with another value is found by a start-up check, before
   * any request of its tenants fails on it; the others that unwrap are not named.
   */
  @Test
  void aMasterKeyWithAnotherValueIsFoundBeforeAnyRequest() throws Exception {
    String goodId = "mk_good_" + tenant;
    String badId = "mk_bad_" + tenant;
    byte[] good = key();
    engine(encrypted(Map.of(goodId, good), goodId))
        .execute(request(ScopedKey.of(tenant, "create_payment", "a"), "1.00"), pay("{}"));
    engine(encrypted(Map.of(badId, key()), badId))
        .execute(request(ScopedKey.of(tenant + "_2", "create_payment", "b"), "1.00"), pay("{}"));

    DataProtection anotherValue = encrypted(Map.of(goodId, good, badId, key()), goodId);

    assertThat(anotherValue.masterKeysThatDoNotUnwrap()).contains(badId).doesNotContain(goodId);
    assertThat(DataProtection.none().masterKeysThatDoNotUnwrap()).isEmpty();
  }

  @Test
  void aMissingMasterKeyIsNamedInTheUnreadableError() throws Exception {
    String mk1Id = "mk1_" + tenant;
    String mk2Id = "mk2_" + tenant;
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    engine(encrypted(Map.of(mk1Id, key()), mk1Id)).execute(request(id, "1.00"), pay("{}"));

    Idempotency withoutIt = engine(encrypted(Map.of(mk2Id, key()), mk2Id));
    assertThatThrownBy(() -> withoutIt.execute(request(id, "1.00"), pay("{}")))
        .isInstanceOfSatisfying(
            RecordUnreadableException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(RecordUnreadableException.Reason.KEY_UNAVAILABLE);
              // What the operator must restore, in the message that is logged.
              assertThat(e.getMessage()).contains("Master key " + mk1Id + " is not configured");
            });
    assertThat(executions()).isEqualTo(1);
  }

  /**
   * Encryption turned off with its master keys still configured: new answers and recovery data are
   * stored in the clear, and what was sealed before still replays. With no keys at all, a sealed
   * answer is a clear error and the operation is not run again.
   */
  @Test
  void encryptionTurnedOffStillOpensWhatItSealedAndSealsNothingNew() throws Exception {
    String mkId = "mk_" + tenant;
    StaticKeyProvider masterKeys = StaticKeyProvider.of(Map.of(mkId, key()), mkId);
    ScopedKey sealed = ScopedKey.of(tenant, "create_payment", "sealed");
    ScopedKey clear = ScopedKey.of(tenant, "create_payment", "clear");
    ScopedKey phased = ScopedKey.of(tenant, "create_payment", "phased");
    engine(DataProtection.builder().encryption(masterKeys, dataKeys).build())
        .execute(request(sealed, "1.00"), pay("{\"g\":\"sealed_marker\"}"));
    assertThat(row(sealed).get("response_key_id")).asString().startsWith("dk_");

    DataProtection readOnly = DataProtection.builder().decryptOnly(masterKeys, dataKeys).build();
    Idempotency off = engine(readOnly);
    assertThat(readOnly.encrypts()).isFalse();
    assertThat(readOnly.decrypts()).isTrue();
    assertThat(text(off.execute(request(sealed, "1.00"), pay("{}"))))
        .isEqualTo("{\"g\":\"sealed_marker\"}");
    off.execute(request(clear, "1.00"), pay("{\"g\":\"clear_marker\"}"));
    off.execute(
        request(phased, "1.00"),
        PhasedOperation.builder()
            .local(
                "CREATED",
                (ctx, d) -> {
                  d.put("chargeId", "ch_clear_marker");
                  return Step.next(d);
                })
            .external(
                "CHARGED",
                call -> call.call((ctx, d) -> CallResult.applied(d)).farSideDeduplicatesByKey())
            .complete((ctx, d) -> OperationResult.success(answer("{}"))));
    assertThat(new String((byte[]) row(clear).get("response_body"), StandardCharsets.UTF_8))
        .isEqualTo("{\"g\":\"clear_marker\"}");
    assertThat(row(clear).get("response_key_id")).isNull();
    assertThat((String) row(phased).get("recovery_data"))
        .contains("ch_clear_marker")
        .doesNotContain("~sealed");
    assertThat(text(off.execute(request(clear, "1.00"), pay("{}"))))
        .isEqualTo("{\"g\":\"clear_marker\"}");
    assertThat(dataKeysOf(tenant)).hasSize(1);
    assertThatThrownBy(() -> readOnly.rotateTenantKey(tenant))
        .isInstanceOf(IllegalStateException.class);
    assertThat(dataKeysOf(tenant)).hasSize(1);

    Idempotency noKeys = engine(DataProtection.none());
    assertThatThrownBy(() -> noKeys.execute(request(sealed, "1.00"), pay("{}")))
        .isInstanceOfSatisfying(
            RecordUnreadableException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(RecordUnreadableException.Reason.KEY_UNAVAILABLE);
              assertThat(e.getMessage()).contains("no master keys are configured here");
            });
    assertThat(text(noKeys.execute(request(clear, "1.00"), pay("{}"))))
        .isEqualTo("{\"g\":\"clear_marker\"}");
    assertThat(executions()).isEqualTo(2);
  }

  @Test
  void tenantKeyRotationKeepsRecordsOfBothGenerationsReplaying() throws Exception {
    DataProtection protection = encrypted(Map.of("mk1", key()), "mk1");
    Idempotency idempotency = engine(protection);
    ScopedKey before = ScopedKey.of(tenant, "create_payment", "before");
    ScopedKey after = ScopedKey.of(tenant, "create_payment", "after");
    idempotency.execute(request(before, "1.00"), pay("{\"g\":1}"));
    String newKey = protection.rotateTenantKey(tenant);
    idempotency.execute(request(after, "1.00"), pay("{\"g\":2}"));

    assertThat(row(after).get("response_key_id")).isEqualTo(newKey);
    assertThat(row(before).get("response_key_id")).isNotEqualTo(newKey);
    assertThat(text(idempotency.execute(request(before, "1.00"), pay("{}"))))
        .isEqualTo("{\"g\":1}");
    assertThat(text(idempotency.execute(request(after, "1.00"), pay("{}")))).isEqualTo("{\"g\":2}");
    assertThat(executions()).isEqualTo(2);
  }

  /**
   * Which of a tenant's keys is the newest, and so seals new answers, is judged on the database's
   * clock: a rotation on an instance whose clock runs an hour behind still gives the tenant its new
   * key (the key was dated by that instance, an hour before the current one, so every instance went
   * on sealing with the old key). With the store's clock seam set, keys are dated by it.
   */
  @Test
  void aDataKeyIsDatedByTheDatabasesClockNotTheInstancesUnlessATestClockIsSet() throws Exception {
    Map<String, byte[]> masterKeys = Map.of("mk1", key());
    DataProtection onTime = encrypted(masterKeys, "mk1");
    DataProtection behind =
        encryptedBuilder(masterKeys, "mk1")
            .clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofHours(-1)))
            .build();
    String first = onTime.rotateTenantKey(tenant);
    String rotated = behind.rotateTenantKey(tenant);
    assertThat(rotated).isNotEqualTo(first);

    ScopedKey id = ScopedKey.of(tenant, "create_payment", "after-rotation");
    engine(encrypted(masterKeys, "mk1")).execute(request(id, "1.00"), pay("{\"g\":2}"));
    assertThat(row(id).get("response_key_id")).as("the rotated key seals").isEqualTo(rotated);
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select extract(epoch from now() - created_at) from idemkit_data_key"
                    + " where tenant = ? and key_id = ?")) {
      ps.setString(1, tenant);
      ps.setString(2, rotated);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getDouble(1)).as("seconds before the database's now").isBetween(0.0, 60.0);
      }
    }
  }

  /** With the store's clock seam set (tests), a new key is dated by it, as records are. */
  @Test
  void aDataKeyIsDatedByTheStoresTestClockWhenOneIsSet() throws Exception {
    Map<String, byte[]> masterKeys = Map.of("mk1", key());
    java.time.Instant seam = java.time.Instant.parse("2031-05-04T03:02:01Z");
    DataProtection onTestClock =
        DataProtection.builder()
            .encryption(
                StaticKeyProvider.of(masterKeys, "mk1"),
                new PostgresDataKeyStore(ds, java.time.Clock.fixed(seam, java.time.ZoneOffset.UTC)))
            .build();
    String seamKey = onTestClock.rotateTenantKey(tenant);
    assertThat(dataKeys.find(null, tenant, seamKey))
        .get()
        .satisfies(k -> assertThat(k.createdAt()).isEqualTo(seam));
  }

  @Test
  void cryptoShreddingMakesReplaysAClearErrorAndNeverRunsAgain() throws Exception {
    DataProtection protection = encrypted(Map.of("mk1", key()), "mk1");
    Idempotency idempotency = engine(protection);
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    ScopedKey otherTenant = ScopedKey.of(tenant + "_other", "create_payment", "k");
    idempotency.execute(request(id, "5.00"), pay("{\"ok\":true}"));
    idempotency.execute(request(otherTenant, "5.00"), pay("{\"ok\":true}"));

    assertThat(protection.shredTenant(tenant)).isEqualTo(1);

    for (int retry = 0; retry < 3; retry++) {
      assertThatThrownBy(() -> idempotency.execute(request(id, "5.00"), pay("{}")))
          .isInstanceOfSatisfying(
              RecordUnreadableException.class,
              e -> {
                assertThat(e.reason()).isEqualTo(RecordUnreadableException.Reason.KEY_DESTROYED);
                assertThat(e.isGone()).isTrue();
              });
    }
    // A different command under the shredded key is refused as one, as for a record that reads:
    // the fingerprint is stored in the clear (contract §2, any state).
    assertThat(idempotency.execute(request(id, "6.00"), pay("{}")))
        .isInstanceOf(Outcome.Mismatch.class);
    assertThat(executions()).isEqualTo(2);
    assertThat(row(id).get("state")).isEqualTo("COMPLETED");
    // Another tenant is untouched; the shredded tenant's new operations get a new key.
    assertThat(text(idempotency.execute(request(otherTenant, "5.00"), pay("{}"))))
        .isEqualTo("{\"ok\":true}");
    ScopedKey fresh = ScopedKey.of(tenant, "create_payment", "fresh");
    assertThat(idempotency.execute(request(fresh, "5.00"), pay("{\"new\":1}")))
        .isInstanceOf(Outcome.Executed.class);
    assertThat(text(idempotency.execute(request(fresh, "5.00"), pay("{}"))))
        .isEqualTo("{\"new\":1}");
  }

  @Test
  void aShreddedRecordPastItsWindowIsReplacedByANewOperation() throws Exception {
    DataProtection protection = encrypted(Map.of("mk1", key()), "mk1");
    Idempotency idempotency = engine(protection);
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    idempotency.execute(request(id, "5.00"), pay("{\"v\":1}"));
    protection.shredTenant(tenant);
    sql(
        "update idemkit_record set expires_at = now() - interval '1 second' where tenant = ?",
        tenant);

    assertThat(idempotency.execute(request(id, "5.00"), pay("{\"v\":2}")))
        .isInstanceOf(Outcome.Executed.class);
    assertThat(executions()).isEqualTo(2);
  }

  // ---- keyed fingerprints -----------------------------------------------------------------

  @Test
  void aFingerprintKeyRotationAndARecipeChangeMidRetriesStillReplay() throws Exception {
    byte[] fk1 = key();
    byte[] fk2 = key();
    Idempotency idempotency = engine(DataProtection.none());
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    Map<String, Object> before = Map.of("amount", "10.00", "currency", "EUR");

    // Deploy 1: keyed fingerprints with fk1.
    FingerprintRecipes deploy1 =
        FingerprintRecipes.builder()
            .hmacKey("fk1", fk1)
            .currentHmacKey("fk1")
            .current("v2")
            .build();
    idempotency.execute(deploy1.request(id, before, TTL), pay("{\"paid\":1}"));
    String stored = (String) row(id).get("fingerprint");
    assertThat(stored).startsWith("v2:hmac-sha256:fk1:");
    assertThat(row(id).get("fingerprint_key_id")).isEqualTo("fk1");

    // Deploy 2: the HMAC key rotated to fk2, and the command gained "captureMethod" (default
    // "automatic"); the new recipe v3 hashes it, v2 keeps the form records were made with.
    FingerprintRecipes deploy2 =
        FingerprintRecipes.builder()
            .hmacKey("fk1", fk1)
            .hmacKey("fk2", fk2)
            .currentHmacKey("fk2")
            .recipe("v2", DataProtectionIT::withoutDefaultCaptureMethod, true)
            .recipe("v3", tree -> tree, true)
            .current("v3")
            .build();
    Map<String, Object> after = new LinkedHashMap<>(before);
    after.put("captureMethod", "automatic");
    assertThat(deploy2.fingerprint(after).toString()).isNotEqualTo(stored); // would be a 422

    Outcome retry = idempotency.execute(deploy2.request(id, after, TTL), pay("{}"));
    assertThat(retry).isInstanceOf(Outcome.Replayed.class);
    assertThat(text(retry)).isEqualTo("{\"paid\":1}");
    // A really different command is still refused under the old recipe.
    Map<String, Object> manual = new LinkedHashMap<>(before);
    manual.put("captureMethod", "manual");
    assertThat(idempotency.execute(deploy2.request(id, manual, TTL), pay("{}")))
        .isInstanceOf(Outcome.Mismatch.class);
    Map<String, Object> otherAmount = new LinkedHashMap<>(after);
    otherAmount.put("amount", "11.00");
    assertThat(idempotency.execute(deploy2.request(id, otherAmount, TTL), pay("{}")))
        .isInstanceOf(Outcome.Mismatch.class);
    assertThat(executions()).isEqualTo(1);

    // New records are made with the new recipe and key.
    ScopedKey next = ScopedKey.of(tenant, "create_payment", "next");
    idempotency.execute(deploy2.request(next, after, TTL), pay("{\"paid\":2}"));
    assertThat((String) row(next).get("fingerprint")).startsWith("v3:hmac-sha256:fk2:");
  }

  @Test
  void aRetiredFingerprintKeyCannotConfirmARetry() throws Exception {
    Idempotency idempotency = engine(DataProtection.none());
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    Map<String, Object> command = Map.of("amount", "10.00");
    FingerprintRecipes old =
        FingerprintRecipes.builder()
            .hmacKey("fk1", key())
            .currentHmacKey("fk1")
            .current("v2")
            .build();
    idempotency.execute(old.request(id, command, TTL), pay("{}"));
    FingerprintRecipes retired =
        FingerprintRecipes.builder()
            .hmacKey("fk2", key())
            .currentHmacKey("fk2")
            .current("v2")
            .build();

    assertThat(idempotency.execute(retired.request(id, command, TTL), pay("{}")))
        .isInstanceOf(Outcome.Mismatch.class);
    assertThat(executions()).isEqualTo(1);
  }

  // ---- redaction, replay modes, schema versions -------------------------------------------

  @Test
  void redactionDropsTheSecurityCodeAndMasksTheCardNumberBeforeStoring() throws Exception {
    DataProtection protection =
        DataProtection.builder()
            .redact(
                "create_payment", JsonFieldRedactor.of(List.of("card.cvc"), List.of("card.number")))
            .build();
    Idempotency idempotency = engine(protection);
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    String full =
        "{\"id\":\"pay_1\", \"card\": {\"number\":\""
            + CARD
            + "\",\"cvc\":\"737\",\"exp\":\"12/30\"}}";

    Outcome first = idempotency.execute(request(id, "1.00"), pay(full));
    Outcome replay = idempotency.execute(request(id, "1.00"), pay("{}"));
    Outcome again = idempotency.execute(request(id, "1.00"), pay("{}"));

    assertThat(text(first)).isEqualTo(full);
    String redacted =
        "{\"id\":\"pay_1\",\"card\":{\"number\":\"************4242\",\"exp\":\"12/30\"}}";
    assertThat(text(replay)).isEqualTo(redacted);
    assertThat(text(again)).isEqualTo(redacted);
    byte[] stored = (byte[]) row(id).get("response_body");
    assertThat(new String(stored, StandardCharsets.UTF_8)).isEqualTo(redacted);
    assertThat(new String(stored, StandardCharsets.UTF_8))
        .doesNotContain(CARD)
        .doesNotContain("737");
  }

  @Test
  void outcomeModeStoresNoBodyAndReplaysTheResourceId() throws Exception {
    Idempotency idempotency =
        engine(DataProtection.builder().replayOutcome("create_payment").build());
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    LocalOperation op =
        ctx -> {
          executed(ctx);
          return OperationResult.success(
              answer("{\"id\":\"pay_9\",\"secret\":\"s3cr3t\"}").withResourceId("pay_9"));
        };

    idempotency.execute(request(id, "1.00"), op);
    Outcome replay = idempotency.execute(request(id, "1.00"), op);

    assertThat(text(replay)).isEqualTo("{\"id\":\"pay_9\"}");
    assertThat(replay.storedResponse().orElseThrow().status()).isEqualTo(201);
    assertThat(new String((byte[]) row(id).get("response_body"), StandardCharsets.ISO_8859_1))
        .doesNotContain("s3cr3t");
    assertThat(row(id).get("resource_id")).isEqualTo("pay_9");
    assertThat(executions()).isEqualTo(1);
  }

  /**
   * Header names are case-insensitive: an answer whose handler wrote {@code location} and {@code
   * content-type} is kept by reference (or outcome) exactly as one that wrote {@code Location}.
   */
  @Test
  void aLowerCaseLocationNamesTheResourceInReferenceAndOutcomeModes() throws Exception {
    Idempotency idempotency =
        engine(
            encryptedBuilder(Map.of("mk1", key()), "mk1")
                .replayByReference(
                    "create_order",
                    "order",
                    (id, type, resourceId, stored) ->
                        Optional.of(
                            new StoredResponse(
                                stored.status(),
                                stored.headers(),
                                ("{\"rebuilt\":\"" + type + "/" + resourceId + "\"}")
                                    .getBytes(StandardCharsets.UTF_8),
                                stored.schemaVersion(),
                                resourceId)))
                .replayOutcome("create_widget")
                .build());
    Map<String, String> lowerCase =
        Map.of("content-type", "application/json", "location", "/v1/things/thing_7");
    ScopedKey order = ScopedKey.of(tenant, "create_order", "k-ref");
    ScopedKey widget = ScopedKey.of(tenant, "create_widget", "k-outcome");
    LocalOperation op =
        ctx -> {
          executed(ctx);
          return OperationResult.success(
              StoredResponse.of(
                  201,
                  lowerCase,
                  "{\"id\":\"thing_7\",\"secret\":\"s3cr3t\"}".getBytes(StandardCharsets.UTF_8)));
        };

    idempotency.execute(request(order, "1.00"), op);
    idempotency.execute(request(widget, "1.00"), op);
    Outcome byReference = idempotency.execute(request(order, "1.00"), op);
    Outcome byOutcome = idempotency.execute(request(widget, "1.00"), op);

    assertThat(text(byReference)).isEqualTo("{\"rebuilt\":\"order/thing_7\"}");
    assertThat(row(order).get("resource_id")).isEqualTo("thing_7");
    assertThat(text(byOutcome)).isEqualTo("{\"id\":\"thing_7\"}");
    assertThat(byOutcome.storedResponse().orElseThrow().headers())
        .containsEntry("location", "/v1/things/thing_7")
        .containsEntry("Content-Type", "application/json")
        .doesNotContainKey("content-type");
    assertThat(row(widget).get("resource_id")).isEqualTo("thing_7");
    for (ScopedKey id : List.of(order, widget)) {
      assertThat(new String((byte[]) row(id).get("response_body"), StandardCharsets.ISO_8859_1))
          .doesNotContain("s3cr3t");
    }
    assertThat(executions()).isEqualTo(2);
  }

  @Test
  void referenceModeRebuildsFromTheCurrentResourceAndSaysWhenItIsGone() throws Exception {
    Map<String, String> resources = new java.util.concurrent.ConcurrentHashMap<>();
    Idempotency idempotency =
        engine(
            encryptedBuilder(Map.of("mk1", key()), "mk1")
                .replayByReference(
                    "create_order",
                    "order",
                    (id, type, resourceId, stored) ->
                        Optional.ofNullable(resources.get(type + "/" + resourceId))
                            .map(
                                body ->
                                    new StoredResponse(
                                        stored.status(),
                                        stored.headers(),
                                        body.getBytes(StandardCharsets.UTF_8),
                                        stored.schemaVersion(),
                                        resourceId)))
                .build());
    ScopedKey id = ScopedKey.of(tenant, "create_order", "k");
    // The order is there before the operation answers (the resolver reads what is current); a
    // retry's run, rolled back when its record meets the first's, changes nothing outside.
    resources.put("order/ord_1", "{\"id\":\"ord_1\",\"status\":\"OPEN\"}");
    LocalOperation op =
        ctx -> {
          executed(ctx);
          return OperationResult.success(
              StoredResponse.of(
                  201,
                  Map.of("Content-Type", "application/json", "Location", "/v1/orders/ord_1"),
                  "{\"id\":\"ord_1\",\"status\":\"OPEN\"}".getBytes(StandardCharsets.UTF_8)));
        };

    idempotency.execute(request(id, "1.00"), op);
    resources.put("order/ord_1", "{\"id\":\"ord_1\",\"status\":\"PAID\"}");
    Outcome replay = idempotency.execute(request(id, "1.00"), op);

    assertThat(replay).isInstanceOf(Outcome.Replayed.class);
    assertThat(text(replay)).isEqualTo("{\"id\":\"ord_1\",\"status\":\"PAID\"}");
    assertThat(replay.storedResponse().orElseThrow().headers())
        .containsEntry("Location", "/v1/orders/ord_1");
    assertThat(row(id).get("resource_id")).isEqualTo("ord_1");
    resources.clear();
    assertThatThrownBy(() -> idempotency.execute(request(id, "1.00"), op))
        .isInstanceOfSatisfying(
            RecordUnreadableException.class,
            e -> assertThat(e.reason()).isEqualTo(RecordUnreadableException.Reason.REFERENCE_GONE));
    assertThat(executions()).isEqualTo(1);
  }

  @Test
  void anAnswerStoredUnderSchemaVersionOneIsReplayedAsVersionTwo() throws Exception {
    ScopedKey id = ScopedKey.of(tenant, "create_payment", "k");
    // Release 1: answers {"amount":"10.00","currency":"EUR"}, schema version 1 (the default).
    engine(DataProtection.none())
        .execute(request(id, "10.00"), pay("{\"amount\":\"10.00\",\"currency\":\"EUR\"}"));
    assertThat(row(id).get("response_schema_version")).isEqualTo(1);

    // Release 2 answers {"amount":{"value":..,"currency":..}} and registers an upcaster.
    DataProtection release2 =
        DataProtection.builder()
            .upcaster(
                "create_payment",
                1,
                (key, v1) -> {
                  @SuppressWarnings("unchecked")
                  Map<String, Object> old =
                      (Map<String, Object>)
                          dev.idemkit.internal.Json.parse(
                              new String(v1.body(), StandardCharsets.UTF_8));
                  String v2 =
                      "{\"amount\":{\"value\":\"%s\",\"currency\":\"%s\"}}"
                          .formatted(old.get("amount"), old.get("currency"));
                  return new StoredResponse(
                      v1.status(),
                      v1.headers(),
                      v2.getBytes(StandardCharsets.UTF_8),
                      2,
                      v1.resourceId());
                })
            .build();
    Outcome replay = engine(release2).execute(request(id, "10.00"), pay("{}"));

    assertThat(text(replay)).isEqualTo("{\"amount\":{\"value\":\"10.00\",\"currency\":\"EUR\"}}");
    assertThat(replay.storedResponse().orElseThrow().schemaVersion()).isEqualTo(2);
    assertThat(executions()).isEqualTo(1);
  }

  // ---- helpers ----------------------------------------------------------------------------

  private static Object withoutDefaultCaptureMethod(Object tree) {
    @SuppressWarnings("unchecked")
    Map<String, Object> map = new LinkedHashMap<>((Map<String, Object>) tree);
    if ("automatic".equals(map.get("captureMethod"))) {
      map.remove("captureMethod");
    }
    return map;
  }

  private static byte[] key() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    return key;
  }

  private DataProtection encrypted(Map<String, byte[]> masterKeys, String current) {
    return encryptedBuilder(masterKeys, current).build();
  }

  private DataProtection.Builder encryptedBuilder(Map<String, byte[]> masterKeys, String current) {
    return DataProtection.builder().encryption(StaticKeyProvider.of(masterKeys, current), dataKeys);
  }

  private Idempotency engine(DataProtection protection) {
    return Idempotency.create(protection.protect(raw), IdempotencyConfig.builder().build());
  }

  private static IdempotentRequest request(ScopedKey id, String amount) {
    return new IdempotentRequest(id, Fingerprint.of(Map.of("amount", amount)), TTL);
  }

  private static StoredResponse answer(String json) {
    return StoredResponse.of(
        201, Map.of("Content-Type", "application/json"), json.getBytes(StandardCharsets.UTF_8));
  }

  private LocalOperation pay(String json) {
    return ctx -> {
      executed(ctx);
      return OperationResult.success(answer(json));
    };
  }

  private static String text(Outcome outcome) {
    return new String(outcome.storedResponse().orElseThrow().body(), StandardCharsets.UTF_8);
  }

  private Map<String, Object> row(ScopedKey id) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select * from idemkit_record_keys where tenant = ? and operation = ? and idem_key = ?")) {
      ps.setString(1, id.tenant());
      ps.setString(2, id.operation());
      ps.setString(3, id.key().value());
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          row.put(rs.getMetaData().getColumnName(i), rs.getObject(i));
        }
        return row;
      }
    }
  }

  private List<String> dataKeysOf(String tenant) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "select key_id || '@' || master_key_id from idemkit_data_key where tenant = ?")) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        List<String> keys = new java.util.ArrayList<>();
        while (rs.next()) {
          keys.add(rs.getString(1));
        }
        return keys;
      }
    }
  }

  private void sql(String sql, Object... params) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      ps.executeUpdate();
    }
  }
}
