package dev.idemkit.spring.boot;

/**
 * The start-up replication check, set to refuse, found the database unsafe for failover or could
 * not tell; the message is the check's one line and {@link ReplicationUnsafeFailureAnalyzer} prints
 * it instead of a stack trace.
 */
final class ReplicationUnsafeException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  ReplicationUnsafeException(String message) {
    super(message);
  }
}
