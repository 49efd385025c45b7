package dev.idemkit.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An event that could never be stored or sent is refused when built or appended, naming the field,
 * and leaves no row: not in the outbox, not in the aggregate counters.
 */
class OutboxAppendValidationIT {

  private final Outbox outbox = Outbox.create(TestPostgres.dataSource(), new TestClock());

  @BeforeEach
  void reset() {
    TestPostgres.reset();
  }

  static Stream<Arguments> invalidEvents() {
    return Stream.of(
        refused("empty type", "type", () -> event("", "t", "payment", "p", "k", "{}")),
        refused("blank type", "type", () -> event(" \t", "t", "payment", "p", "k", "{}")),
        refused("blank tenant", "tenant", () -> event("E", "  ", "payment", "p", "k", "{}")),
        refused("empty aggregate type", "aggregateType", () -> event("E", "t", "", "p", "k", "{}")),
        refused(
            "blank aggregate id", "aggregateId", () -> event("E", "t", "payment", " ", "k", "{}")),
        refused("blank cause key", "causeKey", () -> event("E", "t", "payment", "p", "\n", "{}")),
        refused("empty payload", "payload", () -> event("E", "t", "payment", "p", "k", "")),
        refused("blank payload", "payload", () -> event("E", "t", "payment", "p", "k", "  ")),
        refused(
            "payload not JSON",
            "payload",
            () -> event("E", "t", "payment", "p", "k", "not json {")),
        refused("two JSON values", "payload", () -> event("E", "t", "payment", "p", "k", "{} {}")),
        refused("trailing comma", "payload", () -> event("E", "t", "payment", "p", "k", "[1,]")),
        refused(
            "unclosed object", "payload", () -> event("E", "t", "payment", "p", "k", "{\"a\":1")),
        refused("NUL in type", "type", () -> event("E\0", "t", "payment", "p", "k", "{}")),
        refused("NUL in tenant", "tenant", () -> event("E", "t\0", "payment", "p", "k", "{}")),
        refused(
            "NUL in aggregate id",
            "aggregateId",
            () -> event("E", "t", "payment", "p\0", "k", "{}")),
        refused("NUL in cause key", "causeKey", () -> event("E", "t", "payment", "p", "\0k", "{}")),
        refused(
            "NUL in payload",
            "payload",
            () -> event("E", "t", "payment", "p", "k", "{\"a\":\"\0\"}")),
        refused(
            "space in aggregate type",
            "aggregateType",
            () -> event("E", "t", "wid get", "p", "k", "{}")),
        refused(
            "slash in aggregate type",
            "aggregateType",
            () -> event("E", "t", "a/b", "p", "k", "{}")),
        refused(
            "non-ASCII aggregate type",
            "aggregateType",
            () -> event("E", "t", "zahlung\u00e9", "p", "k", "{}")),
        refused(
            "aggregate type '..'", "aggregateType", () -> event("E", "t", "..", "p", "k", "{}")),
        refused(
            "201-char aggregate type",
            "aggregateType",
            () -> event("E", "t", "a".repeat(201), "p", "k", "{}")));
  }

  private static Arguments refused(String name, String field, Supplier<NewEvent> event) {
    return Arguments.of(name, field, event);
  }

  private static NewEvent event(
      String type,
      String tenant,
      String aggregateType,
      String aggregateId,
      String cause,
      String payload) {
    return new NewEvent(type, tenant, aggregateType, aggregateId, cause, payload);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidEvents")
  void anEventThatCouldNotBeSentIsRefusedNamingTheFieldAndNothingIsStored(
      String name, String field, Supplier<NewEvent> event) throws Exception {
    assertThatThrownBy(() -> appendAndCommit(outbox, event))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(field + " ");
    assertNothingStored();
  }

  @Test
  void aNullFieldIsANullPointerNamingTheField() throws Exception {
    assertThatThrownBy(
            () -> appendAndCommit(outbox, () -> event(null, "t", "payment", "p", "k", "{}")))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("type must not be null");
    assertThatThrownBy(
            () -> appendAndCommit(outbox, () -> event("E", "t", "payment", "p", "k", null)))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("payload must not be null");
    assertNothingStored();
  }

  @Test
  void aPayloadOverTheDefaultLimitIsRefusedAndNothingIsStored() throws Exception {
    String twoMegabytes = "\"" + "x".repeat(2 * 1024 * 1024) + "\"";
    assertThatThrownBy(
            () -> appendAndCommit(outbox, () -> event("E", "t", "payment", "p", "k", twoMegabytes)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("payload is " + (2 * 1024 * 1024 + 2) + " bytes")
        .hasMessageContaining("at most " + Outbox.DEFAULT_MAX_PAYLOAD_BYTES);
    assertNothingStored();
  }

  /** The limit counts UTF-8 bytes: 400 two-byte characters are 802 bytes with the quotes. */
  @Test
  void theLimitIsConfigurableAndCountsUtf8Bytes() throws Exception {
    Outbox small = Outbox.builder(TestPostgres.dataSource()).maxPayloadBytes(801).build();
    String twoByteChars = "\"" + "\u00e9".repeat(400) + "\"";
    assertThatThrownBy(
            () -> appendAndCommit(small, () -> event("E", "t", "payment", "p", "k", twoByteChars)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("payload is 802 bytes");
    assertNothingStored();

    Outbox enough = Outbox.builder(TestPostgres.dataSource()).maxPayloadBytes(802).build();
    appendAndCommit(enough, () -> event("E", "t", "payment", "p", "k", twoByteChars));
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isEqualTo(1);
  }

  /** Every aggregate type the example and the tests use, and JSON of every kind, is stored. */
  @Test
  void validEventsAreStored() throws Exception {
    String[] aggregateTypes = {
      "payment",
      "order",
      "account",
      "thing",
      "ledger-account",
      "transfer-1a2b3c4d",
      "a.b_c-D9",
      "a".repeat(NewEvent.MAX_AGGREGATE_TYPE_LENGTH)
    };
    String[] payloads = {
      "{}", " {\"paymentId\":\"p1\",\"amount\":100} ", "[1,-2.5e+3,0.0,true,false,null]",
      "\"text with \\u0000 escaped and \\\"quotes\\\"\"", "42", "{\"a\":{\"b\":[{}]}}",
      "{\"note\":\"caf\u00e9 \ud83d\ude00\"}"
    };
    int n = 0;
    for (String aggregateType : aggregateTypes) {
      for (String payload : payloads) {
        String cause = "c" + n++;
        appendAndCommit(
            outbox, () -> event("E", "tenant-a", aggregateType, "id 1", cause, payload));
      }
    }
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isEqualTo(n);
    assertThat(
            TestPostgres.count(
                "select count(*) from idemkit_outbox where payload = '{\"note\":\"caf\u00e9 \ud83d\ude00\"}'"))
        .isEqualTo(aggregateTypes.length);
  }

  /** Builds the event and appends it in one transaction, committed: as a writer would. */
  private static void appendAndCommit(Outbox outbox, Supplier<NewEvent> event) throws Exception {
    try (Connection c = TestPostgres.dataSource().getConnection()) {
      c.setAutoCommit(false);
      try {
        outbox.append(c, event.get());
        c.commit();
      } catch (Exception e) {
        c.rollback();
        throw e;
      }
    }
  }

  private static void assertNothingStored() {
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox")).isZero();
    assertThat(TestPostgres.count("select count(*) from idemkit_outbox_aggregate")).isZero();
  }
}
