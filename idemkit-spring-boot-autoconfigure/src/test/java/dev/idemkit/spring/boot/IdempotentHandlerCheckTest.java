package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.idemkit.PhasedOperation;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.security.Principal;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.method.HandlerMethod;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Which handler shapes the start-up check lets through, and which it stops. */
class IdempotentHandlerCheckTest {

  private final IdempotentHandlerCheck check =
      new IdempotentHandlerCheck(JsonMapper.builder().build(), "Api-Version");

  enum Channel {
    WEB,
    MOBILE
  }

  record Line(String sku, int quantity, BigDecimal unitPrice) {}

  record Order(
      @JsonProperty("account_id") String accountId,
      @JsonInclude(JsonInclude.Include.NON_NULL) String note,
      Channel channel,
      Instant requestedAt,
      Optional<String> coupon,
      List<Line> lines,
      Map<String, String> metadata) {}

  /** A mutable bean with a getter and a setter for each property. */
  static class Bean {
    private String amount;
    private List<Line> lines;

    public String getAmount() {
      return amount;
    }

    public void setAmount(String amount) {
      this.amount = amount;
    }

    public List<Line> getLines() {
      return lines;
    }

    public void setLines(List<Line> lines) {
      this.lines = lines;
    }
  }

  record Secretive(String amount, @JsonIgnore String internal) {}

  record Nested(String owner, List<Hidden> items) {}

  record Hidden(
      String name, @JsonProperty(access = JsonProperty.Access.WRITE_ONLY) String password) {}

  static class Handlers {
    @Idempotent(operation = "order")
    public ResponseEntity<String> order(
        Principal tenant,
        @PathVariable String shop,
        @RequestHeader("Api-Version") String version,
        @RequestBody Order order) {
      return null;
    }

    @Idempotent(operation = "bean")
    public ResponseEntity<String> bean(@RequestBody Bean bean) {
      return null;
    }

    @Idempotent(operation = "map")
    public ResponseEntity<String> map(@RequestBody Map<String, Object> body) {
      return null;
    }

    @Idempotent(operation = "tree")
    public ResponseEntity<String> tree(@RequestBody JsonNode body) {
      return null;
    }

    @Idempotent(operation = "list")
    public ResponseEntity<String> list(@RequestBody List<Line> lines) {
      return null;
    }

    @Idempotent(operation = "ignored")
    public ResponseEntity<String> ignored(@RequestBody Secretive body) {
      return null;
    }

    @Idempotent(operation = "nested")
    public ResponseEntity<String> nested(@RequestBody Nested body) {
      return null;
    }

    @Idempotent(operation = "charge", phased = true, replayedStatuses = 402)
    public PhasedOperation<?> phasedWithReplayPolicy() {
      return null;
    }

    @Idempotent(operation = "charge", phased = true)
    public ResponseEntity<Object> phasedAnsweringItself() {
      return null;
    }

    @Idempotent(operation = "charge", phased = true, required = false)
    public PhasedOperation<?> phasedWithAnOptionalKey() {
      return null;
    }

    @Idempotent(operation = "reserve", replayedStatuses = 402)
    public ResponseEntity<String> localWithReplayPolicy() {
      return null;
    }

    @Idempotent(operation = "header")
    public ResponseEntity<String> header(@RequestHeader("X-Request-Id") String requestId) {
      return null;
    }
  }

  private List<String> problems(String method) {
    Method m =
        Arrays.stream(Handlers.class.getMethods())
            .filter(x -> x.getName().equals(method))
            .findFirst()
            .orElseThrow();
    return check.problems(new HandlerMethod(new Handlers(), m));
  }

  @Test
  void commonBodyShapesAndTheInputsTheFingerprintHoldsPass() {
    assertThat(problems("order")).isEmpty();
    assertThat(problems("bean")).isEmpty();
    assertThat(problems("map")).isEmpty();
    assertThat(problems("tree")).isEmpty();
    assertThat(problems("list")).isEmpty();
    // Ignored on input as well as on output: never part of the request.
    assertThat(problems("ignored")).isEmpty();
  }

  @Test
  void aReplayPolicyOnAPhasedOperationWhichWouldNotFollowItIsNamed() {
    assertThat(problems("phasedWithReplayPolicy"))
        .singleElement()
        .asString()
        .contains("is phased and names replayedStatuses [402]");
    assertThat(problems("localWithReplayPolicy")).isEmpty();
  }

  @Test
  void aPhasedHandlerThatAnswersItselfOrTakesAnOptionalKeyIsNamed() {
    assertThat(problems("phasedAnsweringItself"))
        .singleElement()
        .asString()
        .contains("must return the PhasedOperation<...> to run");
    assertThat(problems("phasedWithAnOptionalKey"))
        .singleElement()
        .asString()
        .contains("is phased and its key is optional");
  }

  @Test
  void aWriteOnlyPropertyDeepInTheBodyOrAHeaderIsNamed() {
    assertThat(problems("nested"))
        .singleElement()
        .asString()
        .contains("body property \"items.password\" of Nested");
    assertThat(problems("header")).singleElement().asString().contains("@RequestHeader requestId");
  }
}
