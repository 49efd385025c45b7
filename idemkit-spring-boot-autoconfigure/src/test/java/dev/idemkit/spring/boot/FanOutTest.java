package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.RecordState;
import dev.idemkit.ScopedKey;
import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.spi.IdempotencyListener;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FanOutTest {

  private final ScopedKey id = ScopedKey.of("t1", "charge", "k1");
  private final List<String> heard = new ArrayList<>();

  @Test
  void everyCallReachesEachListenerInOrder() {
    IdempotencyListener fanOut =
        firstAndSecond(IdempotencyListener.class, false, IdempotencyListener.NONE);

    fanOut.onEscalated(id);
    fanOut.onFailure(id, RecordState.FAILED_RETRYABLE, null);

    assertThat(heard)
        .containsExactly(
            "first escalated t1/charge/k1",
            "second escalated t1/charge/k1",
            "first failed FAILED_RETRYABLE",
            "second failed FAILED_RETRYABLE");
  }

  @Test
  void anyListenerTypeIsFannedOutAndAMethodNoListenerOverridesIsHarmless() {
    OutboxListener fanOut = firstAndSecond(OutboxListener.class, false, OutboxListener.NONE);

    fanOut.published(3);
    fanOut.consumed("ledger", 1);

    assertThat(heard).containsExactly("first published 3", "second published 3");
  }

  @Test
  void noneOrOneListenerIsNotWrapped() {
    IdempotencyListener only = new Recording("only", false, heard);

    assertThat(FanOut.of(IdempotencyListener.class, List.of(), IdempotencyListener.NONE))
        .isSameAs(IdempotencyListener.NONE);
    assertThat(FanOut.of(IdempotencyListener.class, List.of(only), IdempotencyListener.NONE))
        .isSameAs(only);
  }

  @Test
  void aListenerThatThrowsStopsTheCallWithItsOwnException() {
    IdempotencyListener fanOut =
        firstAndSecond(IdempotencyListener.class, true, IdempotencyListener.NONE);

    assertThatThrownBy(() -> fanOut.onEscalated(id))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("meter registry closed");
    assertThat(heard).isEmpty();
  }

  /** Two recording listeners, "first" and "second", fanned out. */
  private <L> L firstAndSecond(Class<L> type, boolean firstThrows, L none) {
    return FanOut.of(
        type,
        List.of(
            type.cast(new Recording("first", firstThrows, heard)),
            type.cast(new Recording("second", false, heard))),
        none);
  }

  /** Writes what it hears into {@code heard}, or, {@code throwing}, fails on an escalation. */
  private record Recording(String name, boolean throwing, List<String> heard)
      implements IdempotencyListener, OutboxListener {

    @Override
    public void onEscalated(ScopedKey id) {
      if (throwing) {
        throw new IllegalStateException("meter registry closed");
      }
      heard.add(name + " escalated " + id);
    }

    @Override
    public void onFailure(ScopedKey id, RecordState state, Throwable cause) {
      heard.add(name + " failed " + state);
    }

    @Override
    public void published(int count) {
      heard.add(name + " published " + count);
    }
  }
}
