package dev.idemkit.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The client's key rules are the server's: 1–255 visible ASCII characters. */
class KeysTest {

  @ParameterizedTest
  @ValueSource(
      strings = {"a", "8e03978e-40d5-43e8-bc93-6894a57f9324", "ik_abc.DEF~!#$%&'()*+", "~"})
  void acceptsVisibleAscii(String key) {
    assertThat(Keys.requireValid(key)).isEqualTo(key);
  }

  @Test
  void acceptsEveryVisibleAsciiCharacterAndExactly255() {
    StringBuilder all = new StringBuilder();
    for (char c = 0x21; c <= 0x7E; c++) {
      all.append(c);
    }
    assertThat(Keys.requireValid(all.toString())).hasSize(94);
    assertThat(Keys.requireValid("k".repeat(255))).hasSize(255);
  }

  @Test
  void refusesNullEmptyAndTooLong() {
    assertThatThrownBy(() -> Keys.requireValid(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("missing");
    assertThatThrownBy(() -> Keys.requireValid(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> Keys.requireValid("k".repeat(256)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("256 characters, at most 255");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"with space", "tab\there", "new\nline", "del\u007F", "caf\u00e9", "nul\u0000"})
  void refusesSpacesControlAndNonAscii(String key) {
    assertThatThrownBy(() -> Keys.requireValid(key))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("disallowed character at position")
        .hasMessageContaining("0x21-0x7E");
  }

  @Test
  void randomKeysAreUuidsAndDistinct() {
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String key = Keys.random();
      assertThat(UUID.fromString(key).version()).isEqualTo(4);
      keys.add(key);
    }
    assertThat(keys).hasSize(1000);
  }

  @Test
  void headerIsBareUnlessTheKeyNeedsQuoting() {
    assertThat(Keys.headerValue("abc-123")).isEqualTo("abc-123");
    assertThat(Keys.headerValue("back\\slash")).isEqualTo("back\\slash");
    assertThat(Keys.headerValue("a,b")).isEqualTo("\"a,b\"");
    assertThat(Keys.headerValue("a;b")).isEqualTo("\"a;b\"");
    assertThat(Keys.headerValue("say\"hi\\")).isEqualTo("\"say\\\"hi\\\\\"");
  }

  @Test
  void anInvalidCallerKeyIsRefusedBeforeAnythingIsSent() {
    try (ScriptedServer server =
            ScriptedServer.start().on("/v1/payments", ScriptedServer.Reply.of(201));
        IdempotentClient client = IdempotentClient.builder().baseUri(server.uri()).build()) {
      assertThatThrownBy(() -> client.post("/v1/payments").key("not a key"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("position 4");
      assertThat(server.attempts()).isEmpty();
    }
  }

  @Test
  void aKeyThatNeedsQuotingArrivesQuotedOnEveryAttempt() {
    try (ScriptedServer server =
            ScriptedServer.start()
                .on("/v1/payments", ScriptedServer.Reply.of(503), ScriptedServer.Reply.of(201));
        IdempotentClient client =
            IdempotentClient.builder().baseUri(server.uri()).sleeper(d -> {}).build()) {
      client.post("/v1/payments").key("order,42").json("{}").send();
      assertThat(server.keys("/v1/payments")).containsExactly("\"order,42\"", "\"order,42\"");
    }
  }
}
