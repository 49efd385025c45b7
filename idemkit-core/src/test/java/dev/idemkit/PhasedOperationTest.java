package dev.idemkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

/**
 * What the builder accepts. How the engine runs a takeover of each kind of external phase is in the
 * store contract suite ({@code IdempotencyStoreContract}, idemkit-test), on every store.
 */
class PhasedOperationTest {

  private static final PhasedOperation.Call<Map<String, String>> CHARGE =
      (ctx, d) -> CallResult.applied(d);

  @Test
  void anExternalPhaseThatSaysNeitherHowToLookUpNorThatTheFarSideDeduplicatesIsRefused() {
    assertThatThrownBy(
            () ->
                PhasedOperation.builder()
                    .external("CHARGED", call -> call.call(CHARGE))
                    .complete(
                        (ctx, d) ->
                            OperationResult.success(StoredResponse.of(201, Map.of(), new byte[0]))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("External phase CHARGED")
        .hasMessageContaining(".lookup(...)")
        .hasMessageContaining(".farSideDeduplicatesByKey()");
  }

  @Test
  void noExternalPhaseWithNeitherCanBeMadeOutsideTheBuilderEither() {
    assertThatThrownBy(
            () ->
                new PhasedOperation.External<Map<String, String>>(
                    "CHARGED",
                    (ctx, d) -> Step.next(d),
                    CHARGE,
                    Optional.empty(),
                    false,
                    (ctx, d) -> Step.next(d)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(".lookup(...)")
        .hasMessageContaining(".farSideDeduplicatesByKey()");
  }

  @Test
  void anExternalPhaseWithoutACallIsRefused() {
    assertThatThrownBy(
            () ->
                PhasedOperation.builder()
                    .external("CHARGED", call -> call.lookup(CHARGE).farSideDeduplicatesByKey()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("External phase CHARGED declares no call");
  }

  @Test
  void aLookupOrTheFarSidesDeduplicationIsEnoughAndIsKeptInThePhase() {
    PhasedOperation.Call<Map<String, String>> lookup = (ctx, d) -> CallResult.notApplied("none");

    PhasedOperation<Map<String, String>> op =
        PhasedOperation.builder()
            .external("LOOKED_UP", call -> call.call(CHARGE).lookup(lookup))
            .external("DEDUPLICATED", call -> call.call(CHARGE).farSideDeduplicatesByKey())
            .complete(
                (ctx, d) -> OperationResult.success(StoredResponse.of(201, Map.of(), new byte[0])));

    assertThat(op.phases())
        .extracting(
            p -> ((PhasedOperation.External<Map<String, String>>) p).lookup(),
            p -> ((PhasedOperation.External<Map<String, String>>) p).farSideDeduplicatesByKey())
        .containsExactly(
            Tuple.tuple(Optional.of(lookup), false), Tuple.tuple(Optional.empty(), true));
  }
}
