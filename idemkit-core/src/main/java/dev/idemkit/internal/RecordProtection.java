package dev.idemkit.internal;

import dev.idemkit.DataProtection;
import dev.idemkit.IdempotencyRecord;
import dev.idemkit.OperatorResolution;
import dev.idemkit.RecordState;
import dev.idemkit.RecordUnreadableException;
import dev.idemkit.RecordUnreadableException.Reason;
import dev.idemkit.ReplayMode;
import dev.idemkit.ScopedKey;
import dev.idemkit.StoredResponse;
import dev.idemkit.spi.Checkpoint;
import dev.idemkit.spi.FinalAnswer;
import dev.idemkit.spi.ReferenceResolver;
import dev.idemkit.spi.ResponseRedactor;
import dev.idemkit.spi.ResponseUpcaster;
import dev.idemkit.spi.Snapshot;
import dev.idemkit.spi.StoreTransaction;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * What {@link DataProtection} does to a record: its answer and recovery data redacted, reduced
 * (replay mode) and sealed on the way in, opened, rebuilt and upcast on the way out ({@link
 * ProtectedStore} applies it to the store's calls).
 *
 * <p>A stored body written here is an envelope: {@code 00 'I' 'K' '1'}, a flags byte (bit 0:
 * sealed; bits 4-5: replay mode), the key id's length and ASCII bytes, then the payload (for a
 * sealed one: a 12-byte IV and the AES-256-GCM ciphertext with its tag). The payload is the body
 * ({@code BODY}), the resource type ({@code REFERENCE}) or nothing ({@code OUTCOME}). The
 * associated data binds it to its record (tenant, operation, key, status, schema version, resource
 * id, headers), so a body moved to another record, or a changed status, fails to open. Bodies
 * without the envelope (stored before protection was on) are read as they are. Sealed recovery data
 * is one entry {@code "~sealed": "ik1:<key id>:<base64>"}; an operator's external reference, which
 * the store writes beside it, is sealed the same way in its own entry.
 */
final class RecordProtection {

  private static final byte[] MAGIC = {0, 'I', 'K', '1'};
  private static final int SEALED = 1;
  private static final int IV_BYTES = 12;
  private static final String SEALED_DATA = "~sealed";
  private static final String DATA_PREFIX = "ik1:";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final DataProtection protection;

  /** The keys that open what was sealed; {@code null} when nothing can be opened. */
  private final TenantKeyring keys;

  /** The keys that seal new answers and recovery data; {@code null} when they are kept clear. */
  private final TenantKeyring sealing;

  /**
   * @param keys the tenant data keys of {@code protection}, or {@code null} when it has none
   * @param seals whether new answers and recovery data are sealed with {@code keys}; if not, the
   *     keys only open what was sealed earlier (encryption turned off)
   */
  RecordProtection(DataProtection protection, TenantKeyring keys, boolean seals) {
    this.protection = protection;
    this.keys = keys;
    this.sealing = seals ? keys : null;
  }

  // ---- on the way in ----------------------------------------------------------------------

  /** {@code answer} as the store keeps it: its response redacted, reduced and sealed. */
  FinalAnswer seal(StoreTransaction tx, ScopedKey id, FinalAnswer answer) {
    return answer.withResponse(seal(tx, id, answer.state(), answer.response()));
  }

  private StoredResponse seal(
      StoreTransaction tx, ScopedKey id, RecordState state, StoredResponse response) {
    String operation = id.operation();
    ResponseRedactor redactor = protection.redactor(operation);
    StoredResponse r = redactor == null ? response : redactor.redact(id, response);
    ReplayMode mode =
        state == RecordState.COMPLETED ? protection.replayMode(operation) : ReplayMode.BODY;
    byte[] payload = r.body();
    String resourceId = r.resourceId();
    if (mode != ReplayMode.BODY) {
      resourceId = resourceId != null ? resourceId : lastSegment(header(r, "Location"));
      if (resourceId == null && mode == ReplayMode.REFERENCE) {
        mode = ReplayMode.BODY; // nothing to rebuild it from: keep the answer itself
      } else if (resourceId == null) {
        payload = new byte[0]; // OUTCOME keeps no body, whether or not it names a resource
      } else {
        payload =
            mode == ReplayMode.REFERENCE
                ? protection.resourceType(operation).getBytes(StandardCharsets.UTF_8)
                : new byte[0];
      }
    }
    if (sealing == null && mode == ReplayMode.BODY) {
      return redactor == null ? response : r;
    }
    StoredResponse shape =
        new StoredResponse(r.status(), r.headers(), new byte[0], r.schemaVersion(), resourceId);
    String keyId = "";
    TenantKeyring.DataKey key = null;
    if (sealing != null) {
      key = sealing.current(tx, id.tenant());
      keyId = key.id();
    }
    byte[] header = header(key != null, mode, keyId);
    ByteArrayOutputStream out = new ByteArrayOutputStream(header.length + payload.length + 40);
    out.writeBytes(header);
    if (key != null) {
      byte[] iv = new byte[IV_BYTES];
      RANDOM.nextBytes(iv);
      out.writeBytes(iv);
      out.writeBytes(crypt(Cipher.ENCRYPT_MODE, key, iv, bodyAad(id, shape, header), payload));
    } else {
      out.writeBytes(payload);
    }
    return new StoredResponse(
        r.status(), r.headers(), out.toByteArray(), r.schemaVersion(), resourceId);
  }

  /** {@code checkpoint} as the store keeps it: its data sealed. */
  Checkpoint seal(StoreTransaction tx, ScopedKey id, Checkpoint checkpoint) {
    Map<String, String> data = checkpoint.data();
    if (sealing == null || data.isEmpty()) {
      return checkpoint;
    }
    TenantKeyring.DataKey key = sealing.current(tx, id.tenant());
    return checkpoint.withData(
        Map.of(
            SEALED_DATA,
            sealValue(
                key, dataAad(id, key.id()), Json.write(data).getBytes(StandardCharsets.UTF_8))));
  }

  /** {@code ik1:<key id>:<base64 of IV and ciphertext>}. */
  private static String sealValue(TenantKeyring.DataKey key, byte[] aad, byte[] plain) {
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    byte[] sealed = crypt(Cipher.ENCRYPT_MODE, key, iv, aad, plain);
    byte[] both = new byte[IV_BYTES + sealed.length];
    System.arraycopy(iv, 0, both, 0, IV_BYTES);
    System.arraycopy(sealed, 0, both, IV_BYTES, sealed.length);
    return DATA_PREFIX + key.id() + ":" + Base64.getEncoder().encodeToString(both);
  }

  /**
   * {@code resolution} as the store keeps it: the external reference of an applied verdict (a
   * provider's charge id) sealed, as the rest of the recovery data is; opened again when the record
   * is read ({@link #openData}).
   */
  OperatorResolution sealVerdict(ScopedKey id, OperatorResolution resolution) {
    OperatorResolution stored = resolution;
    if (sealing != null && resolution.applied()) {
      TenantKeyring.DataKey key = sealing.current(null, id.tenant());
      stored =
          OperatorResolution.applied(
              sealValue(
                  key,
                  referenceAad(id, key.id()),
                  resolution.externalReference().getBytes(StandardCharsets.UTF_8)));
    }
    return stored;
  }

  // ---- on the way out ---------------------------------------------------------------------

  /**
   * Opens a read record. One that cannot be opened but is past its window is handed on without its
   * answer and data: the engine replaces it with a new operation and never reads them.
   */
  Snapshot open(StoreTransaction tx, Snapshot snapshot) {
    return new Snapshot(open(tx, snapshot.record(), snapshot.now(), false), snapshot.now());
  }

  IdempotencyRecord open(StoreTransaction tx, IdempotencyRecord r, Instant now, boolean strict) {
    try {
      return new IdempotencyRecord(
          r.id(),
          r.fingerprint(),
          r.state(),
          r.fencingToken(),
          r.lockedUntil(),
          r.recoveryPoint(),
          r.pendingExternal(),
          openData(tx, r.id(), r.recoveryData()),
          r.recoveryAttempts(),
          r.response() == null ? null : open(tx, r.id(), r.response()),
          r.createdAt(),
          r.updatedAt(),
          r.expiresAt(),
          r.escalatedAt());
    } catch (RecordUnreadableException e) {
      if (strict || now == null || !r.isExpiredAt(now)) {
        throw e.withRecordedFingerprint(r.fingerprint());
      }
      return new IdempotencyRecord(
          r.id(),
          r.fingerprint(),
          r.state(),
          r.fencingToken(),
          r.lockedUntil(),
          r.recoveryPoint(),
          r.pendingExternal(),
          Map.of(),
          r.recoveryAttempts(),
          null,
          r.createdAt(),
          r.updatedAt(),
          r.expiresAt(),
          r.escalatedAt());
    }
  }

  private StoredResponse open(StoreTransaction tx, ScopedKey id, StoredResponse stored) {
    byte[] body = stored.body();
    StoredResponse r = stored;
    if (isEnvelope(body)) {
      int flags = body[4] & 0xff;
      ReplayMode mode = ReplayMode.values()[(flags >> 4) & 3];
      int idLength = body[5] & 0xff;
      String keyId = new String(body, 6, idLength, StandardCharsets.US_ASCII);
      byte[] header = Arrays.copyOf(body, 6 + idLength);
      byte[] payload;
      if ((flags & SEALED) != 0) {
        TenantKeyring.DataKey key = key(tx, id, keyId);
        StoredResponse shape =
            new StoredResponse(
                stored.status(),
                stored.headers(),
                new byte[0],
                stored.schemaVersion(),
                stored.resourceId());
        int at = header.length;
        byte[] iv = Arrays.copyOfRange(body, at, at + IV_BYTES);
        payload =
            open(
                id,
                key,
                iv,
                bodyAad(id, shape, header),
                Arrays.copyOfRange(body, at + IV_BYTES, body.length));
      } else {
        payload = Arrays.copyOfRange(body, header.length, body.length);
      }
      r = rebuild(id, stored, mode, payload);
    }
    return upcast(id, r);
  }

  private StoredResponse rebuild(
      ScopedKey id, StoredResponse stored, ReplayMode mode, byte[] payload) {
    switch (mode) {
      case BODY -> {
        return new StoredResponse(
            stored.status(),
            stored.headers(),
            payload,
            stored.schemaVersion(),
            stored.resourceId());
      }
      case OUTCOME -> {
        Map<String, String> headers = new LinkedHashMap<>(stored.headers());
        // The body is rebuilt as JSON: it replaces the stored type, however its name was spelled.
        headers.keySet().removeIf("Content-Type"::equalsIgnoreCase);
        headers.put("Content-Type", "application/json");
        byte[] body =
            (stored.resourceId() == null ? "{}" : Json.write(Map.of("id", stored.resourceId())))
                .getBytes(StandardCharsets.UTF_8);
        return new StoredResponse(
            stored.status(), headers, body, stored.schemaVersion(), stored.resourceId());
      }
      default -> {
        String type = new String(payload, StandardCharsets.UTF_8);
        ReferenceResolver resolver = protection.resolver(id.operation());
        if (resolver == null) {
          throw new RecordUnreadableException(
              id,
              Reason.KEY_UNAVAILABLE,
              id + " is stored by reference but no resolver is registered for " + id.operation(),
              null);
        }
        StoredResponse shape =
            new StoredResponse(
                stored.status(),
                stored.headers(),
                new byte[0],
                stored.schemaVersion(),
                stored.resourceId());
        return resolver
            .rebuild(id, type, stored.resourceId(), shape)
            .orElseThrow(
                () ->
                    new RecordUnreadableException(
                        id,
                        Reason.REFERENCE_GONE,
                        "The "
                            + type
                            + " "
                            + stored.resourceId()
                            + " that "
                            + id
                            + " created no longer exists",
                        null));
      }
    }
  }

  private StoredResponse upcast(ScopedKey id, StoredResponse r) {
    for (int guard = 0; guard < 100; guard++) {
      ResponseUpcaster upcaster = protection.upcaster(id.operation(), r.schemaVersion());
      if (upcaster == null) {
        return r;
      }
      StoredResponse next = upcaster.upcast(id, r);
      if (next.schemaVersion() <= r.schemaVersion()) {
        throw new IllegalStateException(
            "The upcaster of "
                + id.operation()
                + " from version "
                + r.schemaVersion()
                + " did not raise the version");
      }
      r = next;
    }
    return r;
  }

  private Map<String, String> openData(
      StoreTransaction tx, ScopedKey id, Map<String, String> data) {
    Map<String, String> opened = data;
    String sealed = data.get(SEALED_DATA);
    if (sealed != null && sealed.startsWith(DATA_PREFIX)) {
      opened = Json.readStringMap(openValue(tx, id, sealed, keyId -> dataAad(id, keyId)));
      if (data.size() > 1) {
        // Entries written beside the sealed ones without this store (an operator's resolution,
        // which the store adds in SQL) are read as they are, on top of what was sealed.
        Map<String, String> merged = new LinkedHashMap<>(opened);
        data.forEach(
            (name, value) -> {
              if (!SEALED_DATA.equals(name)) {
                merged.put(name, value);
              }
            });
        opened = merged;
      }
    }
    String reference = opened.get(OperatorResolution.REFERENCE_KEY);
    if (keys != null && reference != null && reference.startsWith(DATA_PREFIX)) {
      Map<String, String> withReference = new LinkedHashMap<>(opened);
      withReference.put(
          OperatorResolution.REFERENCE_KEY,
          openValue(tx, id, reference, keyId -> referenceAad(id, keyId)));
      opened = withReference;
    }
    return opened;
  }

  /** Opens what {@link #sealValue} made. */
  private String openValue(
      StoreTransaction tx,
      ScopedKey id,
      String sealed,
      java.util.function.Function<String, byte[]> aad) {
    int colon = sealed.indexOf(':', DATA_PREFIX.length());
    if (colon < 0) {
      throw tampered(id, new IllegalArgumentException("no key id"));
    }
    String keyId = sealed.substring(DATA_PREFIX.length(), colon);
    byte[] both;
    try {
      both = Base64.getDecoder().decode(sealed.substring(colon + 1));
    } catch (IllegalArgumentException e) {
      throw tampered(id, e);
    }
    if (both.length < IV_BYTES) {
      throw tampered(id, new IllegalArgumentException("too short"));
    }
    TenantKeyring.DataKey key = key(tx, id, keyId);
    byte[] plain =
        open(
            id,
            key,
            Arrays.copyOf(both, IV_BYTES),
            aad.apply(keyId),
            Arrays.copyOfRange(both, IV_BYTES, both.length));
    return new String(plain, StandardCharsets.UTF_8);
  }

  private TenantKeyring.DataKey key(StoreTransaction tx, ScopedKey id, String keyId) {
    if (keys == null) {
      throw new RecordUnreadableException(
          id,
          Reason.KEY_UNAVAILABLE,
          id
              + " was stored encrypted, and no master keys are configured here: configure the"
              + " master keys it was sealed under (with encryption turned off as well: they then"
              + " only open what was sealed earlier)",
          null);
    }
    try {
      return keys.find(tx, id.tenant(), keyId)
          .orElseThrow(
              () ->
                  new RecordUnreadableException(
                      id,
                      Reason.KEY_DESTROYED,
                      "The data key "
                          + keyId
                          + " of tenant "
                          + id.tenant()
                          + " was destroyed; the stored answer of "
                          + id
                          + " is gone for good",
                      null));
    } catch (RecordUnreadableException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new RecordUnreadableException(
          id,
          Reason.KEY_UNAVAILABLE,
          "The data key " + keyId + " cannot be unwrapped: " + e.getMessage(),
          e);
    }
  }

  private static byte[] open(
      ScopedKey id, TenantKeyring.DataKey key, byte[] iv, byte[] aad, byte[] sealed) {
    try {
      return crypt(Cipher.DECRYPT_MODE, key, iv, aad, sealed);
    } catch (IllegalStateException e) {
      throw tampered(id, e);
    }
  }

  private static RecordUnreadableException tampered(ScopedKey id, Exception e) {
    return new RecordUnreadableException(
        id,
        Reason.TAMPERED,
        "The stored answer of " + id + " does not authenticate (altered or moved)",
        e);
  }

  /**
   * One AES-GCM cipher per thread, initialized afresh (key, new IV) for every use: {@link
   * Cipher#getInstance} searches the security providers on every call, and a cipher that sees the
   * same data key again keeps its expanded key schedule.
   */
  private static final ThreadLocal<Cipher> AES_GCM =
      ThreadLocal.withInitial(
          () -> {
            try {
              return Cipher.getInstance("AES/GCM/NoPadding");
            } catch (GeneralSecurityException e) {
              throw new IllegalStateException("AES/GCM/NoPadding is required on every JDK", e);
            }
          });

  private static byte[] crypt(
      int mode, TenantKeyring.DataKey key, byte[] iv, byte[] aad, byte[] input) {
    try {
      Cipher cipher = AES_GCM.get();
      cipher.init(mode, key.key(), new GCMParameterSpec(128, iv));
      cipher.updateAAD(aad);
      return cipher.doFinal(input);
    } catch (AEADBadTagException e) {
      throw new IllegalStateException("does not authenticate", e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed", e);
    }
  }

  private static byte[] header(boolean sealed, ReplayMode mode, String keyId) {
    byte[] id = keyId.getBytes(StandardCharsets.US_ASCII);
    if (id.length > 255) {
      throw new IllegalArgumentException("key id too long: " + keyId);
    }
    byte[] h = new byte[6 + id.length];
    System.arraycopy(MAGIC, 0, h, 0, 4);
    h[4] = (byte) ((sealed ? SEALED : 0) | (mode.ordinal() << 4));
    h[5] = (byte) id.length;
    System.arraycopy(id, 0, h, 6, id.length);
    return h;
  }

  private static boolean isEnvelope(byte[] body) {
    return body.length >= 6
        && body[0] == MAGIC[0]
        && body[1] == MAGIC[1]
        && body[2] == MAGIC[2]
        && body[3] == MAGIC[3]
        && body.length >= 6 + (body[5] & 0xff);
  }

  /** Binds a sealed body to its record: scope, status, schema version, resource id, headers. */
  private static byte[] bodyAad(ScopedKey id, StoredResponse shape, byte[] header) {
    String bound =
        "idemkit-body\u0000"
            + id.tenant()
            + '\u0000'
            + id.operation()
            + '\u0000'
            + id.key().value()
            + '\u0000'
            + shape.status()
            + '\u0000'
            + shape.schemaVersion()
            + '\u0000'
            + (shape.resourceId() == null ? "" : shape.resourceId())
            + '\u0000'
            + new TreeMap<>(shape.headers());
    byte[] text = bound.getBytes(StandardCharsets.UTF_8);
    byte[] aad = Arrays.copyOf(header, header.length + text.length);
    System.arraycopy(text, 0, aad, header.length, text.length);
    return aad;
  }

  private static byte[] dataAad(ScopedKey id, String keyId) {
    return recordAad("idemkit-data", id, keyId);
  }

  /** Binds an operator's sealed external reference to its record and key. */
  private static byte[] referenceAad(ScopedKey id, String keyId) {
    return recordAad("idemkit-operator-reference", id, keyId);
  }

  /** {@code purpose}, the record's scope and the data key's id, NUL-separated. */
  private static byte[] recordAad(String purpose, ScopedKey id, String keyId) {
    return (purpose
            + '\u0000'
            + id.tenant()
            + '\u0000'
            + id.operation()
            + '\u0000'
            + id.key().value()
            + '\u0000'
            + keyId)
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A header's value whatever the case of its name ({@code Location}, {@code location}): header
   * names are case-insensitive (RFC 9110), and a handler may spell them either way.
   */
  private static String header(StoredResponse r, String name) {
    return r.headers().entrySet().stream()
        .filter(h -> h.getKey().equalsIgnoreCase(name))
        .map(Map.Entry::getValue)
        .findFirst()
        .orElse(null);
  }

  private static String lastSegment(String location) {
    if (location == null || location.isEmpty()) {
      return null;
    }
    String path = location.endsWith("/") ? location.substring(0, location.length() - 1) : location;
    int slash = path.lastIndexOf('/');
    String last = path.substring(slash + 1);
    return last.isEmpty() ? null : last;
  }
}
