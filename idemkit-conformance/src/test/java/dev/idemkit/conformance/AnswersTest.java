package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** How the report counts and compares: plurals, and bodies that differ only in times or ids. */
class AnswersTest {

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void countsAreInTheSingularForOne() {
    assertThat(Answers.count(1, "effect")).isEqualTo("1 effect");
    assertThat(Answers.count(0, "effect")).isEqualTo("0 effects");
    assertThat(Answers.count(2, "success")).isEqualTo("2 successes");
    assertThat(Answers.count(3, "body byte")).isEqualTo("3 body bytes");
    assertThat(Answers.count(7, "in-progress answer")).isEqualTo("7 in-progress answers");
  }

  @Test
  void bodiesThatDifferOnlyInTimestampsOrIdsHaveOneShape() {
    byte[] a = bytes("{\"id\":\"it_1\",\"ref\":\"r\",\"servedAt\":\"2026-12-05T01:14:37.123Z\"}");
    byte[] b = bytes("{\"id\":\"it_2\",\"ref\":\"r\",\"servedAt\":\"2026-12-05T01:14:38.5Z\"}");
    byte[] other = bytes("{\"id\":\"it_3\",\"ref\":\"s\",\"servedAt\":\"2026-12-05T01:14:38Z\"}");
    byte[] uuid =
        bytes("{\"paymentId\":\"3e93197a-5ed5-4c54-9289-2b85fa7735c8\",\"status\":\"COMPLETED\"}");
    byte[] uuid2 =
        bytes("{\"paymentId\":\"7d9f14e3-ee7d-4eb8-acf4-c17a18740e1f\",\"status\":\"COMPLETED\"}");

    assertThat(Answers.differOnlyInTimesOrIds(a, b)).isTrue();
    assertThat(Answers.differOnlyInTimesOrIds(uuid, uuid2)).isTrue();
    assertThat(Answers.differOnlyInTimesOrIds(a, other)).as("another ref").isFalse();
    assertThat(Answers.differOnlyInTimesOrIds(a, a)).as("the same bytes").isFalse();
  }
}
