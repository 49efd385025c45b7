package dev.idemkit.spring.boot;

/**
 * A request object that says what it means: its canonical form is what the fingerprint hashes, so
 * requests the API treats as equal ({@code "10"} and {@code "10.00"} EUR, an absent default and the
 * default spelled out) fingerprint alike. Without it, the object's JSON form is hashed.
 */
public interface CanonicalCommand {

  /**
   * A plain value tree (maps, lists, strings, booleans, exact numbers) of the normalized command,
   * including a version of its shape (e.g. {@code "v": 1}).
   */
  Object canonicalForm();
}
