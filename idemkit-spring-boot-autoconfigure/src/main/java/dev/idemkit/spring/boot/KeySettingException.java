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

  KeySettingException(String property, String message) {
    super(message);
    this.property = property;
  }

  /** The property to fix, e.g. {@code idemkit.protection.encryption.current-master-key}. */
  String property() {
    return property;
  }
}
