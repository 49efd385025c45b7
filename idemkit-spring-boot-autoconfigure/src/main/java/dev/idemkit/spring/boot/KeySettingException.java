package dev.idemkit.spring.boot;

/**
 * A key setting that stops the start (a master key, an HMAC key, the issued-key secret): not
 * base64, not of its size, a current id that names no key, a value that does not unwrap what it
 * wrapped. The message is one line that names the property and says what is wrong, never the key
 * itself; {@link KeySettingFailureAnalyzer} prints it instead of a stack trace.
 */
final class KeySettingException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final String action;

  /** {@code message}: what is wrong; {@code action}: what to do, often {@link #fix}. */
  KeySettingException(String message, String action) {
    super(message);
    this.action = action;
  }

  /**
   * The action "fix {@code property}" (e.g. {@code
   * idemkit.protection.encryption.current-master-key}), where nothing more needs saying.
   */
  static String fix(String property) {
    return "Fix " + property + " and start again.";
  }

  /** What to do, one line. */
  String action() {
    return action;
  }
}
