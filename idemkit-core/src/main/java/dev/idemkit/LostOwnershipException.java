package dev.idemkit;

/**
 * The caller was the owner of a record but no longer is: its lease ran out and another request or
 * the recovery worker took over (the fencing token moved on). The write that found this out was
 * rolled back with its whole transaction; the new owner's work stands.
 */
public class LostOwnershipException extends RuntimeException {

  private final transient ScopedKey id;

  public LostOwnershipException(ScopedKey id, long fencingToken) {
    super(
        "Lost ownership of "
            + id
            + ": fencing token "
            + fencingToken
            + " is no longer current; another owner took over after the lease expired");
    this.id = id;
  }

  public ScopedKey id() {
    return id;
  }
}
