package dev.idemkit.spring.boot;

/**
 * A key setting that stops the start (a master key, an HMAC key, the issued-key secret): not
 * base64, not of its size, a current id that names no key, a value that does not unwrap what it
 * wrapped. The message is one line that names the property and says what is wrong, never the key
 * itself; {@link KeySettingFailureAnalyzer} prints it instead of a stack trace.
 */
final class KeySettingException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final String property;
  private final String action;

  KeySettingException(String property, String message) {
    this(property, message, "Fix " + property + " and start again.");
  }

  /** With {@code action}, what to do, where "fix the property" would not say enough. */
  KeySettingException(String property, String message, String action) {
    super(message);
    this.property = property;
    this.action = action;
  }

  /** The property to fix, e.g. {@code idemkit.protection.encryption.current-master-key}. */
  String property() {
    return property;
  }

  /** What to do, one line. */
  String action() {
    return action;
  }
}
