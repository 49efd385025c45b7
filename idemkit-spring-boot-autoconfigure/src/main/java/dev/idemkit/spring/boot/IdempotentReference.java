package dev.idemkit.spring.boot;

import dev.idemkit.spi.ReferenceResolver;

/**
 * A bean that makes an operation replay by reference ({@link dev.idemkit.ReplayMode#REFERENCE}):
 * its record keeps only the created resource's type and id (from the answer's {@code Location}),
 * and a replay is this bean's answer from the resource as it is now, with {@code
 * Idempotent-Replayed: true}.
 */
public interface IdempotentReference extends ReferenceResolver {

  /** The operation, as in {@link Idempotent#operation()}. */
  String operation();

  /** The resource type stored with each record (e.g. {@code order}). */
  String resourceType();
}
