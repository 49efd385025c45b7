package dev.idemkit.spi;

/**
 * The check made where a store's capability is looked up ({@link IdempotencyStore#capability}):
 * once, when the engine or a worker is made, so a store that lacks what the configuration needs is
 * refused at start-up, never in the middle of a request.
 */
public final class StoreCapabilities {

  private StoreCapabilities() {}

  /**
   * {@code store}'s implementation of {@code capability}.
   *
   * @param neededBy what needs it, as the user configured it (for the message), e.g. "a recovery
   *     schedule (IdempotencyConfig.recoverySchedule)"
   * @throws IllegalArgumentException naming the missing interface when {@code store} lacks it
   */
  public static <T> T require(IdempotencyStore store, Class<T> capability, String neededBy) {
    return store
        .capability(capability)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    store.getClass().getName()
                        + " lacks the store capability "
                        + capability.getName()
                        + ", which "
                        + neededBy
                        + " needs: use a store that has it, or configure without it"));
  }
}
