package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.client.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RawHttpTest {

  private static RawHttp.Response parse(String wire) throws IOException {
    return RawHttp.parse(wire.getBytes(StandardCharsets.ISO_8859_1), System.nanoTime());
  }

  @Test
  void aChunkedAnswerIsReassembledByteForByte() throws IOException {
    RawHttp.Response r =
        parse(
            "HTTP/1.1 201 \r\nTransfer-Encoding: chunked\r\nLocation: /v1/x/1\r\n\r\n"
                + "5\r\n{\"a\":\r\n3;ext=1\r\n1}\n\r\n0\r\n\r\n");

    assertThat(r.status()).isEqualTo(201);
    assertThat(r.bodyText()).isEqualTo("{\"a\":1}\n");
    assertThat(r.header("location")).contains("/v1/x/1");
  }

  @Test
  void contentLengthBoundsTheBodyAndATruncatedBodyIsAnError() throws IOException {
    assertThat(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA").bodyText())
        .isEqualTo("ok");
    assertThatThrownBy(() -> parse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("2 of 9");
    assertThatThrownBy(() -> parse("")).hasMessageContaining("without an answer");
  }

  /**
   * A malformed number in an answer (status code, Content-Length, chunk size) threw
   * NumberFormatException or NegativeArraySizeException out of the checker (exit status 1 and a
   * stack trace, as if a check had failed); it is a malformed answer like any other.
   */
  @Test
  void aMalformedNumberInTheAnswerIsAMalformedAnswer() {
    for (String wire :
        new String[] {
          "HTTP/1.1 abc OK\r\n\r\n",
          "HTTP/1.1 2000 OK\r\n\r\n",
          "HTTP/1.1 -20 OK\r\n\r\n",
          "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nok",
          "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nok",
          "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nok",
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-2\r\nok\r\n0\r\n\r\n"
        }) {
      assertThatThrownBy(() -> parse(wire))
          .as(wire)
          .isInstanceOf(IOException.class)
          .hasMessageStartingWith("not an HTTP answer");
    }
  }

  @Test
  void twoKeyHeadersAndControlCharactersGoOutAsWritten() {
    RawHttp.Request request =
        new RawHttp.Request(
            "POST",
            java.net.URI.create("http://127.0.0.1:9/v1/p?q=1"),
            java.util.List.of(
                java.util.Map.entry("Idempotency-Key", "\"a\u0007\""),
                java.util.Map.entry("Idempotency-Key", "b")),
            "{}".getBytes(StandardCharsets.UTF_8));

    String wire = new String(request.bytes(), StandardCharsets.ISO_8859_1);

    assertThat(wire)
        .startsWith("POST /v1/p?q=1 HTTP/1.1\r\n")
        .contains("Idempotency-Key: \"a\u0007\"\r\nIdempotency-Key: b\r\n")
        .contains("Content-Length: 2\r\n")
        .endsWith("\r\n\r\n{}");
  }

  @Test
  void aRequestCarriesItsUrisHostUnlessItNamesItsOwn() {
    java.net.URI proxy = java.net.URI.create("http://127.0.0.1:7001/v1/p");
    RawHttp.Request plain = new RawHttp.Request("GET", proxy, java.util.List.of(), new byte[0]);
    RawHttp.Request forServer =
        new RawHttp.Request(
            "GET",
            proxy,
            java.util.List.of(java.util.Map.entry("Host", "api.test:8080")),
            new byte[0]);

    assertThat(new String(plain.bytes(), StandardCharsets.ISO_8859_1))
        .contains("\r\nHost: 127.0.0.1:7001\r\n");
    String wire = new String(forServer.bytes(), StandardCharsets.ISO_8859_1);
    assertThat(wire).contains("\r\nHost: api.test:8080\r\n").doesNotContain("7001");
  }

  @Test
  void effectCountsAreReadByPath() {
    Object doc = Json.parse("{\"count\":2,\"data\":[{\"n\":\"7\"},{}],\"x\":1.5}");

    assertThat(EffectCount.of(doc, "count")).isEqualTo(2);
    assertThat(EffectCount.of(doc, "data.length")).isEqualTo(2);
    assertThat(EffectCount.of(doc, "data")).isEqualTo(2);
    assertThat(EffectCount.of(doc, "data.0.n")).isEqualTo(7);
    assertThat(EffectCount.of(Json.parse("[1,2,3]"), "")).isEqualTo(3);
    assertThatThrownBy(() -> EffectCount.of(doc, "missing")).hasMessageContaining("no 'missing'");
  }
}
