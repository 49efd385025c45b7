package dev.idemkit.spi;

/** Work done inside one store transaction. */
@FunctionalInterface
public interface TransactionWork<T> {
  T run(StoreTransaction tx) throws Exception;
}
