package dev.idemkit.internal;

import dev.idemkit.OperationContext;
import dev.idemkit.OperatorResolution;
import dev.idemkit.ScopedKey;
import dev.idemkit.spi.StoreTransaction;
import java.util.Optional;

/**
 * The context handed to operations and phases: {@link #tx} is the transaction they run in, null
 * while a call runs; {@link #lookingUp} is set while a lookup may read an operator's verdict.
 */
final class RunContext implements OperationContext {
  private final ScopedKey id;
  private final boolean resumed;
  private final Optional<OperatorResolution> verdict;
  StoreTransaction tx;
  boolean lookingUp;

  RunContext(ScopedKey id, boolean resumed, Optional<OperatorResolution> verdict) {
    this.id = id;
    this.resumed = resumed;
    this.verdict = verdict;
  }

  @Override
  public ScopedKey id() {
    return id;
  }

  @Override
  public boolean resumed() {
    return resumed;
  }

  @Override
  public Optional<OperatorResolution> operatorResolution() {
    return lookingUp ? verdict : Optional.empty();
  }

  @Override
  public StoreTransaction transaction() {
    if (tx == null) {
      throw new IllegalStateException(
          "No transaction here: external calls run outside any transaction");
    }
    return tx;
  }
}
