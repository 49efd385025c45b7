package dev.idemkit.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.chaos.History.Op;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The answer check: every stored answer a key gave, to its client and when asked again after the
 * run, is one status and one body; what is not stored (an unknown outcome, a refusal answered once)
 * is not compared.
 */
class AnswerStabilityTest {

  private static final String PAID = ClientProcess.digest(bytes("{\"paymentId\":\"p1\"}"));
  private static final String EXISTS =
      ClientProcess.digest(bytes("{\"errorCode\":\"PAYMENT_ALREADY_EXISTS\"}"));

  private final List<Op> history = new ArrayList<>();

  private void add(String type, Object process, String op, int status, String digest) {
    history.add(
        new Op(
            history.size(),
            history.size(),
            type,
            process,
            "create-payment",
            Map.of("op", op, "status", status, "digest", digest)));
  }

  @Test
  void aReplayOfTheSameStatusAndBodyIsNoChange() {
    add("ok", 0, "op-1", 201, PAID);
    add("ok", ClientProcess.ASKED_AGAIN, "op-1", 201, PAID);
    add("fail", 1, "op-2", 402, EXISTS);
    add("fail", ClientProcess.ASKED_AGAIN, "op-2", 402, EXISTS);
    List<String> anomalies = new ArrayList<>();

    assertThat(Accounting.changedAnswers(history, anomalies)).isZero();
    assertThat(anomalies).isEmpty();
  }

  @Test
  void anotherStatusOrBodyForOneKeyIsAChangedAnswer() {
    add("ok", 0, "op-1", 201, PAID);
    add("fail", ClientProcess.ASKED_AGAIN, "op-1", 409, EXISTS);
    add("ok", 1, "op-2", 201, PAID);
    add("ok", ClientProcess.ASKED_AGAIN, "op-2", 201, EXISTS);
    List<String> anomalies = new ArrayList<>();

    assertThat(Accounting.changedAnswers(history, anomalies)).isEqualTo(2);
    assertThat(anomalies)
        .containsExactly(
            "changed answer op-1: 201 "
                + PAID.substring(0, 12)
                + ", then 409 "
                + EXISTS.substring(0, 12),
            "changed answer op-2: 201 "
                + PAID.substring(0, 12)
                + ", then 201 "
                + EXISTS.substring(0, 12));
  }

  /** A refusal that is not stored (here a quota's 429) may rightly be answered otherwise later. */
  @Test
  void answersThatAreNotStoredAreNotCompared() {
    add("fail", 0, "op-1", 429, EXISTS);
    add("ok", ClientProcess.ASKED_AGAIN, "op-1", 201, PAID);
    add("info", ClientProcess.ASKED_AGAIN, "op-1", 0, EXISTS);
    List<String> anomalies = new ArrayList<>();

    assertThat(Accounting.changedAnswers(history, anomalies)).isZero();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
