package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.InvalidIdempotencyKeyException;
import dev.idemkit.RecordUnreadableException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ErrorCodeTest {

  @Test
  void codesTheCoreAlsoNamesAreTheSameStrings() {
    assertThat(ErrorCode.IDEMPOTENCY_KEY_INVALID.code())
        .isEqualTo(InvalidIdempotencyKeyException.ERROR_CODE);
    assertThat(ErrorCode.IDEMPOTENCY_RECORD_UNREADABLE.code())
        .isEqualTo(RecordUnreadableException.ERROR_CODE);
  }

  @Test
  void aProblemCarriesTheCodeAndItsType() {
    var answer =
        Problems.response(
            409, ErrorCode.IDEMPOTENCY_REQUEST_IN_PROGRESS, "Request in progress", "d");

    String body = new String(answer.getBody(), StandardCharsets.UTF_8);
    assertThat(body)
        .contains("\"errorCode\":\"IDEMPOTENCY_REQUEST_IN_PROGRESS\"")
        .contains("\"type\":\"urn:problem-type:idemkit:idempotency-request-in-progress\"");
  }
}
