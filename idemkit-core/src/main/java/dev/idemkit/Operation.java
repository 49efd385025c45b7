package dev.idemkit;

/**
 * Something made safe to retry: a {@link LocalOperation} (one transaction) or a {@link
 * PhasedOperation} (atomic phases around external calls).
 */
public sealed interface Operation permits LocalOperation, PhasedOperation {}
