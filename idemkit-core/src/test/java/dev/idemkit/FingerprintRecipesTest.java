package dev.idemkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class FingerprintRecipesTest {

  private static final byte[] K1 = filled(1);
  private static final byte[] K2 = filled(2);
  private static final Map<String, Object> COMMAND = Map.of("amount", "10.00", "currency", "EUR");

  @Test
  void plainIsV1AndEqualsFingerprintOf() {
    assertThat(FingerprintRecipes.plain().fingerprint(COMMAND)).isEqualTo(Fingerprint.of(COMMAND));
  }

  @Test
  void keyedFingerprintsNameTheirKeyAndDependOnIt() {
    Fingerprint k1 = keyed("k1").fingerprint(COMMAND);
    Fingerprint k2 = keyed("k2").fingerprint(COMMAND);

    assertThat(k1.toString()).startsWith("v2:hmac-sha256:k1:");
    assertThat(Fingerprint.parse(k1.toString())).isEqualTo(k1);
    assertThat(k1.digest())
        .isNotEqualTo(k2.digest())
        .isNotEqualTo(Fingerprint.of(COMMAND).digest());
  }

  @Test
  void recomputeUsesTheStoredRecipeAndKey() {
    Fingerprint stored = keyed("k1").fingerprint(COMMAND);
    FingerprintRecipes now = keyed("k2");

    assertThat(now.recompute(COMMAND, stored)).contains(stored);
    assertThat(now.recompute(Map.of("amount", "11.00", "currency", "EUR"), stored))
        .isPresent()
        .get()
        .isNotEqualTo(stored);
    assertThat(now.recompute(COMMAND, Fingerprint.of(COMMAND))).contains(Fingerprint.of(COMMAND));
    IdempotentRequest retry =
        now.request(ScopedKey.of("t", "op", "k"), COMMAND, java.time.Duration.ofHours(1));
    assertThat(retry.fingerprint()).isNotEqualTo(stored);
    assertThat(retry.sameCommandAs(stored)).isTrue();
  }

  @Test
  void anUnknownRecipeOrKeyCannotConfirm() {
    Fingerprint stored = keyed("k1").fingerprint(COMMAND);
    FingerprintRecipes withoutK1 =
        FingerprintRecipes.builder().hmacKey("k2", K2).currentHmacKey("k2").current("v2").build();

    assertThat(withoutK1.recompute(COMMAND, stored)).isEmpty();
    assertThat(withoutK1.recompute(COMMAND, new Fingerprint("v7", "sha256", "0".repeat(64))))
        .isEqualTo(Optional.empty());
  }

  @Test
  void aNewCanonicalFormKeepsOldRecordsComparable() {
    Fingerprint stored = FingerprintRecipes.plain().fingerprint(COMMAND);
    Map<String, Object> withDefault = new LinkedHashMap<>(COMMAND);
    withDefault.put("channel", "web");
    FingerprintRecipes deploy =
        FingerprintRecipes.builder()
            .recipe(
                "v1",
                tree -> {
                  @SuppressWarnings("unchecked")
                  Map<String, Object> m = new LinkedHashMap<>((Map<String, Object>) tree);
                  m.remove("channel", "web");
                  return m;
                },
                false)
            .recipe("v3", tree -> tree, false)
            .current("v3")
            .build();

    assertThat(deploy.fingerprint(withDefault)).isNotEqualTo(stored);
    assertThat(
            deploy
                .request(ScopedKey.of("t", "op", "k"), withDefault, java.time.Duration.ofHours(1))
                .sameCommandAs(stored))
        .isTrue();
    Map<String, Object> mobile = new LinkedHashMap<>(COMMAND);
    mobile.put("channel", "mobile");
    assertThat(
            deploy
                .request(ScopedKey.of("t", "op", "k"), mobile, java.time.Duration.ofHours(1))
                .sameCommandAs(stored))
        .isFalse();
  }

  @Test
  void keyedFingerprintsAreTheSameWhenThreadsReuseTheirMacsAcrossKeysAndCommands()
      throws Exception {
    FingerprintRecipes shared = keyed("k1");
    FingerprintRecipes sharedK2 = keyed("k2");
    int threads = 8;
    int perThread = 200;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Map<String, Fingerprint>>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  Map<String, Fingerprint> seen = new LinkedHashMap<>();
                  for (int i = 0; i < perThread; i++) {
                    String amount = (thread * perThread + i) + ".00";
                    Map<String, Object> command = Map.of("amount", amount, "currency", "EUR");
                    seen.put("k1:" + amount, shared.fingerprint(command));
                    seen.put("k2:" + amount, sharedK2.fingerprint(command));
                  }
                  return seen;
                }));
      }
      start.countDown();
      for (var result : results) {
        for (Map.Entry<String, Fingerprint> e : result.get().entrySet()) {
          String[] keyAndAmount = e.getKey().split(":");
          Map<String, Object> command = Map.of("amount", keyAndAmount[1], "currency", "EUR");
          // A fresh instance computes with a Mac of its own, never used before.
          assertThat(e.getValue()).isEqualTo(keyed(keyAndAmount[0]).fingerprint(command));
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void refusesAKeyedCurrentRecipeWithoutAKeyAndShortKeys() {
    assertThatThrownBy(() -> FingerprintRecipes.builder().current("v2").build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FingerprintRecipes.builder().hmacKey("k", new byte[16]))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static FingerprintRecipes keyed(String current) {
    return FingerprintRecipes.builder()
        .hmacKey("k1", K1)
        .hmacKey("k2", K2)
        .currentHmacKey(current)
        .current("v2")
        .build();
  }

  private static byte[] filled(int value) {
    byte[] key = new byte[32];
    Arrays.fill(key, (byte) value);
    return key;
  }
}
