package dev.idemkit.conformance;

import dev.idemkit.conformance.RawHttp.Response;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The key itself: its form, a missing one, malformed ones (each refused, nothing stored), the
 * longest one the profile allows, and the two spellings of one key.
 */
final class KeyChecks extends CheckGroup {

  /**
   * What the first request of the run ({@link Checker#preflight()}) found: its answer, and the
   * key-form finding when the API takes only the other form than the profile's.
   */
  record FirstRequest(Response answer, String keyFormFinding) {
    static final FirstRequest NONE = new FirstRequest(null, null);
  }

  private final Supplier<FirstRequest> first;

  KeyChecks(Endpoint api, Supplier<FirstRequest> first) {
    super(api);
    this.first = first;
  }

  @Override
  List<Check> checks() {
    String p = profile.name();
    String header = api.keyHeaderName();
    return List.of(
        new Check(
            "key.form",
            "A key in the profile's form ("
                + (profile.sfString() ? "an sf-string, \"k\"" : "bare, k")
                + ") is accepted.",
            this::keyForm),
        new Check(
            "key.missing",
            "An endpoint that requires a key refuses a request without one and stores nothing.",
            this::missingKey),
        new Check(
            "key.empty",
            "An empty key is malformed: refused (" + profile.malformedStatus() + "), no effect.",
            () -> malformed(List.of(Map.entry(header, "")))),
        new Check(
            "key.too-long",
            "A key longer than "
                + profile.maxKeyLength()
                + " characters is refused, not truncated.",
            () -> malformed(api.keyHeader("k".repeat(profile.maxKeyLength() + 1)))),
        new Check(
            "key.control-char",
            "A key with a control character is refused, never stored.",
            () -> malformed(api.keyHeader("ctl\u0007" + UUID.randomUUID()))),
        new Check(
            "key.non-ascii",
            "A key with a non-ASCII character is refused, never stored.",
            () -> malformed(api.keyHeader("cl\u00e9-" + UUID.randomUUID()))),
        new Check(
            "key.bad-quoting",
            "An sf-string key with broken quoting is malformed (" + p + ").",
            () ->
                profile.sfString()
                    ? malformed(List.of(Map.entry(header, "\"" + UUID.randomUUID())))
                    : Verdict.skip("the " + p + " profile uses bare keys")),
        new Check(
            "key.two-headers",
            "Two " + header + " headers are ambiguous: refused, nothing runs.",
            () ->
                malformed(
                    List.of(
                        Map.entry(header, api.keyValue(UUID.randomUUID().toString())),
                        Map.entry(header, api.keyValue(UUID.randomUUID().toString()))))),
        new Check(
            "key.max-length",
            "A key of exactly " + profile.maxKeyLength() + " characters is accepted.",
            this::maxLength),
        new Check(
            "key.forms",
            "The sf-string and the bare form of one key never make two operations.",
            () ->
                first.get().keyFormFinding() != null
                    ? Verdict.skip("the API takes only one of the two forms (key.form)")
                    : profile.sfString()
                        ? keyForms()
                        : Verdict.skip(
                            "the "
                                + p
                                + " profile takes keys literally: a quoted key is another key")));
  }

  /** Decided by the first request ({@link Checker#preflight()}), which sends the profile's form. */
  private Verdict keyForm() {
    FirstRequest found = first.get();
    if (found.keyFormFinding() != null) {
      return Verdict.differs(found.keyFormFinding());
    }
    if (found.answer() == null) {
      return Verdict.skip("no first request was sent");
    }
    return Verdict.pass("the first request's key, in this form: " + found.answer().summary());
  }

  private Verdict missingKey() throws Exception {
    String u = api.unique();
    Response r = api.send(api.request(u, List.of()));
    String effect = api.effectNote(u, 0);
    if (!profile.requireKey()) {
      return Verdict.info("keys are optional in " + profile.name() + "; answered " + r.summary());
    }
    return refused("sent no " + api.keyHeaderName(), profile.missingKeyStatus(), r, effect);
  }

  private Verdict malformed(List<Map.Entry<String, String>> keyHeaders) throws Exception {
    String u = api.unique();
    Response r = api.send(api.request(u, keyHeaders));
    String effect = api.effectNote(u, 0);
    return refused("sent " + Answers.describe(keyHeaders), profile.malformedStatus(), r, effect);
  }

  /**
   * A request the profile refuses with {@code status}: one it ran instead, or a refusal with
   * another status, differs from the profile; a refusal that stored an effect anyway breaks the
   * guarantee (the client is told nothing happened).
   */
  private Verdict refused(String sent, int status, Response r, String effect) {
    if (!r.success() && !effect.isEmpty()) {
      return Verdict.violation(sent + ": refused (" + r.summary() + "), but " + effect);
    }
    if (r.status() != status) {
      return Verdict.differs(
          sent
              + ": expected "
              + status
              + ", got "
              + r.summary()
              + (effect.isEmpty() ? "" : "; " + effect));
    }
    return Verdict.pass(sent + ": " + r.summary() + api.countedNote());
  }

  private Verdict maxLength() throws Exception {
    String key = "m" + UUID.randomUUID().toString().replace("-", "");
    key = key + "x".repeat(profile.maxKeyLength() - key.length());
    Response r = api.send(api.request(api.unique(), api.keyHeader(key)));
    return r.success()
        ? Verdict.pass(r.summary())
        : Verdict.differs("a " + key.length() + "-character key was refused: " + r.summary());
  }

  /**
   * An sf-string key and its bare spelling (which the draft's servers may read as the same key).
   */
  private Verdict keyForms() throws Exception {
    String u = api.unique();
    String key = UUID.randomUUID().toString();
    String quoted = api.keyValue(key);
    String header = api.keyHeaderName();
    Response a = api.send(api.request(u, List.of(Map.entry(header, quoted))));
    if (!a.success()) {
      return Verdict.differs(
          "the key in the profile's form (" + quoted + ") was refused: " + a.summary());
    }
    Response b = api.send(api.request(u, List.of(Map.entry(header, key))));
    String firstAnswered = "; the first request was answered " + a.summary();
    if (api.o.effectUrl() != null) {
      // Counted: the verdict is the number of operations; replayed bytes are replay.completed's.
      String effect = api.effectNote(u, 1);
      if (!effect.isEmpty()) {
        return Verdict.violation(
            "the other form (" + key + ") answered " + b.summary() + "; " + effect + firstAnswered);
      }
    } else if (b.success() && !Arrays.equals(a.body(), b.body())) {
      return Verdict.violation(
          "the other form ("
              + key
              + ") got another answer, a second operation: "
              + b.summary()
              + firstAnswered);
    }
    String how = b.success() ? "the same operation (replayed)" : "refused (" + b.status() + ")";
    return Verdict.pass(quoted + " then " + key + ": " + how);
  }
}
