package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.conformance.BrokenServersTest.Run;
import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.UsageTest.Result;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --auth 'Name: value'} sends that header: an API that authenticates by an API key header is
 * checked as fully as one that reads {@code Authorization}.
 */
class AuthHeaderTest {

  @TempDir Path reports;

  @Test
  void anApiKeyHeaderAuthenticatesEveryCheck() throws Exception {
    Run run;
    try (FlawedServer api = new FlawedServer(Flaw.NONE, 300)) {
      api.authenticateWith("X-Api-Key");
      run =
          BrokenServersTest.check(
              api,
              reports,
              "api-key",
              List.of("--auth", "X-Api-Key: key-a", "--auth2", "X-Api-Key: key-b"));
    }

    assertThat(run.exit()).as(run.stderr() + run.stdout()).isZero();
    assertThat(run.failed()).isEmpty();
    // Both principals were told apart by their keys: each got its own operation.
    assertThat(run.statuses()).containsEntry("scope.principal", "PASS");
    assertThat(run.passed()).hasSize(22);
  }

  @Test
  void anAuthorizationValueAndAWholeHeaderAreToldApart() {
    assertThat(Options.authHeader("--auth", "Bearer sk_test_a"))
        .isEqualTo(Map.entry("Authorization", "Bearer sk_test_a"));
    assertThat(Options.authHeader("--auth", "Basic dXNlcjpwYXNz"))
        .isEqualTo(Map.entry("Authorization", "Basic dXNlcjpwYXNz"));
    assertThat(Options.authHeader("--auth", "X-Api-Key: k1"))
        .isEqualTo(Map.entry("X-Api-Key", "k1"));
    assertThat(Options.authHeader("--auth", "Cookie: session=abc; theme=dark"))
        .isEqualTo(Map.entry("Cookie", "session=abc; theme=dark"));
    assertThat(Options.authHeader("--auth", "Authorization: key:secret"))
        .isEqualTo(Map.entry("Authorization", "key:secret"));
    assertThat(Options.authHeader("--auth", "X-Api-Key:\tk1"))
        .isEqualTo(Map.entry("X-Api-Key", "k1"));
  }

  /**
   * A header is a name, a colon and a space: a bare token with a colon in it ({@code sk:abc}, a
   * {@code user:password} an API takes as it is) is an Authorization value, not a header named
   * {@code sk}; without the space a header is sent as Authorization, and a note says so.
   */
  @Test
  void aTokenWithAColonIsAnAuthorizationValue() {
    assertThat(Options.authHeader("--auth", "sk:abc"))
        .isEqualTo(Map.entry("Authorization", "sk:abc"));
    assertThat(Options.authHeader("--auth", "user:pass:word"))
        .isEqualTo(Map.entry("Authorization", "user:pass:word"));
    assertThat(Options.authHeader("--auth2", "X-Api-Key:k2"))
        .isEqualTo(Map.entry("Authorization", "X-Api-Key:k2"));

    Result r = UsageTest.run(UsageTest.withRequired("--auth", "sk:abc", "--auth2", "Bearer b"));
    assertThat(r.err())
        .contains(
            "idemkit-conformance: note: --auth is sent as 'Authorization: sk:abc'; to send a"
                + " header sk instead, put a space after the colon: 'sk: abc'")
        .doesNotContain("--auth2 is sent as");
    assertThat(Options.authNote("--auth", Map.entry("Authorization", "Bearer x"))).isEmpty();
    assertThat(Options.authNote("--auth", Map.entry("X-Api-Key", "k:1"))).isEmpty();
  }

  @Test
  void aHeaderWithoutAValueIsAUsageError() {
    Result r = UsageTest.run(UsageTest.withRequired("--auth2", "X-Api-Key: "));

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--auth2 names the header X-Api-Key but gives it no value");
  }
}
