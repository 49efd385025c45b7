package dev.idemkit.spring.boot;

import dev.idemkit.jdbc.RecordLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code idemkit.*}.
 *
 * <p>One file of about 730 lines on purpose: its groups ({@code Cleanup}, {@code Recovery}, {@code
 * Protection}, …) are public nested types that applications and the workers name ({@code
 * IdemkitProperties.Recovery}), and the configuration metadata names each group by its nested type
 * ({@code IdemkitProperties$Cleanup}); moving them to files of their own would rename those types
 * in the API and in the metadata (and {@code IssuedKeys} would clash with the class of that name).
 */
@ConfigurationProperties("idemkit")
public class IdemkitProperties {

  /** Whether Idemkit is on. */
  private boolean enabled = true;

  /** How long a record answers retries unless an endpoint says otherwise (@Idempotent ttl). */
  private Duration defaultTtl = Duration.ofHours(24);

  /** How long an owner holds a record before a retry may take it over. */
  private Duration lease = Duration.ofSeconds(30);

  /** Status for a key reused with a different request: 422 (default) or 409. */
  private int mismatchStatus = 422;

  /**
   * How long a retry that finds the operation in progress waits for it to finish (then replays)
   * before answering 409 with Retry-After. Zero answers at once.
   */
  private Duration inProgressWait = Duration.ZERO;

  /** The Retry-After given while a downstream outcome is unknown. */
  private Duration outcomePendingRetryAfter = Duration.ofSeconds(2);

  /**
   * Largest response body stored for replay. A larger answer is not stored and not given: the
   * operation is rolled back and the client gets 500 IDEMPOTENCY_RESPONSE_TOO_LARGE, so nothing
   * happens that a retry could not replay.
   */
  private int maxStoredResponseBytes = 64 * 1024;

  /** The header that carries the API version; part of the fingerprint. */
  private String apiVersionHeader = "Api-Version";

  /**
   * Failure statuses of a handler's answer (returned, or thrown as a Spring ErrorResponse) stored
   * and replayed as deterministic business rejections; any other is answered once and leaves no
   * record. An operation's @Idempotent(replayedStatuses) replaces this list for it. Not used by
   * phased operations, whose steps decide what is stored.
   */
  private Set<Integer> replayableStatuses = new LinkedHashSet<>(List.of(402, 404, 409, 410, 422));

  /** Apply Idemkit's schema at start-up (after the application's own Flyway, if any). */
  private boolean migrateSchema = true;

  private final IssuedKeys issuedKeys = new IssuedKeys();

  private final Recovery recovery = new Recovery();

  private final Cleanup cleanup = new Cleanup();

  private final Quota quota = new Quota();

  private final Inbox inbox = new Inbox();

  /**
   * How long a request waits for another request's claim on the same key (a first request still
   * running in its transaction) before it is answered 409 IDEMPOTENCY_REQUEST_IN_PROGRESS with
   * Retry-After. Bounds how long a flood of one key holds connections. The claim statement's query
   * timeout, in whole seconds (rounded up); zero waits for ever.
   */
  private Duration claimWait = Duration.ofSeconds(2);

  /**
   * Cleanup of finished records, scheduled on every instance (they share the work safely: each
   * batch skips rows another instance holds). A record's life: claimed, completed, replayed for its
   * window (its ttl), then its response body is dropped after body-retention, then the record and
   * its history are deleted after metadata-retention (both counted from the end of the window).
   * Live records (in progress, awaiting recovery) are never touched.
   */
  public static class Cleanup {
    /** Whether cleanup runs. */
    private boolean enabled = true;

    /** Pause between cleanup runs; a run goes on in batches until nothing is due. */
    private Duration interval = Duration.ofMinutes(1);

    /**
     * Rows per batch (each batch one short statement per walk). 1000 keeps each batch in the tens
     * of milliseconds on a large table.
     */
    private int batchSize = 1000;

    /**
     * How long a response body is kept after the record's window ended (0: dropped as soon as the
     * window ends). A body may hold personal data; the metadata stays for diagnosis.
     */
    private Duration bodyRetention = Duration.ZERO;

    /**
     * How long a record's metadata (scope, fingerprint, resource id, times) and its history are
     * kept after the window ended; never before the body is dropped. The history of an earlier
     * operation of a key reused after its window is kept as long after the reuse.
     */
    private Duration metadataRetention = Duration.ofDays(7);

    /**
     * Pause between two batches of one run, so that cleanup leaves the database to the traffic most
     * of the time. With the default batch size and pause cleanup drops over 20,000 rows per second
     * and claims keep over 80% of their rate (docs/benchmarks.md, bench/cleanup).
     */
    private Duration pause = Duration.ofMillis(20);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getInterval() {
      return interval;
    }

    public void setInterval(Duration interval) {
      this.interval = interval;
    }

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }

    public Duration getBodyRetention() {
      return bodyRetention;
    }

    public void setBodyRetention(Duration bodyRetention) {
      this.bodyRetention = bodyRetention;
    }

    public Duration getMetadataRetention() {
      return metadataRetention;
    }

    public void setMetadataRetention(Duration metadataRetention) {
      this.metadataRetention = metadataRetention;
    }

    public Duration getPause() {
      return pause;
    }

    public void setPause(Duration pause) {
      this.pause = pause;
    }
  }

  /** The inbox consumers' upkeep (idemkit-outbox). */
  public static class Inbox {

    private final InboxCleanup cleanup = new InboxCleanup();

    public InboxCleanup getCleanup() {
      return cleanup;
    }
  }

  /**
   * Cleanup of the inbox consumers' tables, scheduled on every instance (they share the work
   * safely: each batch skips rows another instance holds): each consumer's processed message ids
   * older than its retention (the retention it was built with; idemkit.events.kafka.inbox-retention
   * for the Kafka consumers), and, for a consumer in sequence from the first message seen, its
   * aggregates idle for as long. Failed, parked and held messages are never touched. Covers every
   * InboxConsumer bean and every consumer an Inboxes bean lists.
   */
  public static class InboxCleanup {
    /** Whether the inbox cleanup runs. */
    private boolean enabled = true;

    /** Pause between inbox cleanup runs; a run deletes in batches until nothing is due. */
    private Duration interval = Duration.ofMinutes(1);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getInterval() {
      return interval;
    }

    public void setInterval(Duration interval) {
      this.interval = interval;
    }
  }

  /**
   * Per-tenant limits on new keys: a new key over a limit is answered 429
   * IDEMPOTENCY_QUOTA_EXCEEDED with Retry-After, stores nothing, and is counted by the
   * idempotency.quota_exceeded.count meter. Retries of existing keys are never refused. Off (0) by
   * default: a library cannot know a service's traffic; set both in production.
   */
  public static class Quota {
    /**
     * Most live records (phased operations in progress or awaiting recovery) a tenant may have; 0:
     * no limit. Records escalated to an operator count: their outcome is unresolved, so they hold
     * their place until an operator resolves them (a tenant whose provider keeps losing answers
     * cannot pile up unknown outcomes past the limit). Decided in memory: exact on one instance;
     * across instances at most this plus each other instance's new live records of one {@code
     * sync-interval} (docs/contract.md, "Quotas"). A refusal's Retry-After is 5 seconds, or 60 when
     * the tenant's escalated records alone fill its places (only an operator frees those).
     */
    private int liveRecordsPerTenant = 0;

    /**
     * Most new keys a tenant may claim per minute (of the database's clock); 0: no limit. Decided
     * in memory: exact on one instance; across instances at most this plus each other instance's
     * new keys of the tenant in two {@code sync-interval}s.
     */
    private int newKeysPerMinutePerTenant = 0;

    /**
     * Most requests of one tenant an instance runs at once, from before their first statement to
     * their answer; 0: no limit. One more waits up to a second for a place (using no connection),
     * then is answered 429 IDEMPOTENCY_QUOTA_EXCEEDED with Retry-After 1: a tenant's flood cannot
     * hold more than this many of the pool's connections or request threads. Per instance, exact.
     */
    private int concurrentRequestsPerTenant = 0;

    /**
     * How long a refusal of the new-keys or live-records quota waits before it is answered (never
     * longer than its Retry-After), holding no connection; 0: answered at once. A client that sends
     * again as soon as it is refused then sends one request a pause per connection, and its
     * refusals stop taking the other tenants' CPU (docs/operations.md, "Quotas"). The application's
     * own refusals may take the same pause: the {@link RefusalPause} bean.
     */
    private Duration refusalPause = Duration.ZERO;

    /**
     * Most refusals of one tenant that wait their {@code refusal-pause} at once on an instance
     * holding a request thread (the layer's own quota refusals); more are answered at once, so that
     * a tenant with many connections cannot hold the request threads. Also how many of a tenant's
     * parked refusals are answered a pause: they are answered in turn.
     */
    private int maxPausedRefusalsPerTenant = 16;

    /**
     * Most refusals of one tenant that wait their {@code refusal-pause} at once on an instance
     * without holding a thread (parked by a servlet filter in async mode, such as an API gate's
     * rate limit: {@link RefusalPause#later}); more are answered at once. Each holds only its
     * connection; they are answered in turn, {@code max-paused-refusals-per-tenant} a pause, so the
     * last may wait this divided by that many pauses.
     */
    private int maxParkedRefusalsPerTenant = 1024;

    public int getMaxParkedRefusalsPerTenant() {
      return maxParkedRefusalsPerTenant;
    }

    public void setMaxParkedRefusalsPerTenant(int maxParkedRefusalsPerTenant) {
      this.maxParkedRefusalsPerTenant = maxParkedRefusalsPerTenant;
    }

    public Duration getRefusalPause() {
      return refusalPause;
    }

    public void setRefusalPause(Duration refusalPause) {
      this.refusalPause = refusalPause;
    }

    public int getMaxPausedRefusalsPerTenant() {
      return maxPausedRefusalsPerTenant;
    }

    public void setMaxPausedRefusalsPerTenant(int maxPausedRefusalsPerTenant) {
      this.maxPausedRefusalsPerTenant = maxPausedRefusalsPerTenant;
    }

    public int getConcurrentRequestsPerTenant() {
      return concurrentRequestsPerTenant;
    }

    public void setConcurrentRequestsPerTenant(int concurrentRequestsPerTenant) {
      this.concurrentRequestsPerTenant = concurrentRequestsPerTenant;
    }

    /**
     * How often each instance writes its quota counts and reads the others' (the quota worker, one
     * transaction each time). Shorter: a smaller overshoot across instances, more statements.
     */
    private Duration syncInterval = Duration.ofSeconds(1);

    public Duration getSyncInterval() {
      return syncInterval;
    }

    public void setSyncInterval(Duration syncInterval) {
      this.syncInterval = syncInterval;
    }

    public int getLiveRecordsPerTenant() {
      return liveRecordsPerTenant;
    }

    public void setLiveRecordsPerTenant(int liveRecordsPerTenant) {
      this.liveRecordsPerTenant = liveRecordsPerTenant;
    }

    public int getNewKeysPerMinutePerTenant() {
      return newKeysPerMinutePerTenant;
    }

    public void setNewKeysPerMinutePerTenant(int newKeysPerMinutePerTenant) {
      this.newKeysPerMinutePerTenant = newKeysPerMinutePerTenant;
    }
  }

  /** The background recovery worker (phased operations with a RecoverableOperation bean). */
  public static class Recovery {
    /** Whether the worker runs. */
    private boolean enabled = true;

    /** Pause between passes. */
    private Duration interval = Duration.ofSeconds(5);

    /** Records taken per pass. */
    private int batchSize = 50;

    /**
     * Wait after the recovery worker's first attempt on an unknown outcome (made as soon as the
     * request leaves it unknown) before its second; each further attempt waits twice as long as the
     * one before (at most max-backoff): 10 s, 20 s, 40 s … by default. Client retries are told to
     * wait as long.
     */
    private Duration backoff = Duration.ofSeconds(10);

    /** The longest wait between two recovery attempts. */
    private Duration maxBackoff = Duration.ofHours(1);

    /**
     * Recovery attempts after which an outcome still unknown is escalated to an operator: no more
     * automatic attempts, a WARN log line once, the idempotency.escalated.count meter, and the
     * record in the admin list until an operator resolves it. The first request's own attempt
     * counts: with the default 8, the worker tries 7 times, waiting 10 s, 20 s … 320 s between its
     * tries with the default backoff, so a record is escalated about 10.5 minutes (630 s) after its
     * first request.
     */
    private int maxAttempts = 8;

    public Duration getBackoff() {
      return backoff;
    }

    public void setBackoff(Duration backoff) {
      this.backoff = backoff;
    }

    public Duration getMaxBackoff() {
      return maxBackoff;
    }

    public void setMaxBackoff(Duration maxBackoff) {
      this.maxBackoff = maxBackoff;
    }

    public int getMaxAttempts() {
      return maxAttempts;
    }

    public void setMaxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getInterval() {
      return interval;
    }

    public void setInterval(Duration interval) {
      this.interval = interval;
    }

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }
  }

  /** Server-issued keys (POST /v1/idempotency-keys) and the operations that accept only those. */
  public static class IssuedKeys {
    /**
     * HMAC secret that signs issued keys, at least 16 bytes, the same on every instance. Required:
     * without it the application does not start, except on the embedded demo database, which keeps
     * a random one in its data directory.
     */
    private String secret = "";

    /**
     * A file holding the secret in base64, read when {@code secret} is not set: for example the
     * embedded demo's {@code <data-dir>/idemkit-issued-keys.secret}, so that a second instance
     * sharing the demo's database signs and verifies the same keys.
     */
    private String secretFile = "";

    /** How long an issued key may be used. */
    private Duration validity = Duration.ofHours(24);

    /** Operations that refuse keys the server did not issue (400 IDEMPOTENCY_KEY_NOT_ISSUED). */
    private List<String> strictOperations = new ArrayList<>();

    /**
     * Where clients get issued keys, named in the answers that refuse a key (the reference service
     * serves {@code POST /v1/idempotency-keys}; issue keys with {@link
     * dev.idemkit.spring.boot.IssuedKeys#issue}).
     */
    private String endpoint = "POST /v1/idempotency-keys";

    public String getEndpoint() {
      return endpoint;
    }

    public void setEndpoint(String endpoint) {
      this.endpoint = endpoint;
    }

    public String getSecretFile() {
      return secretFile;
    }

    public void setSecretFile(String secretFile) {
      this.secretFile = secretFile;
    }

    public String getSecret() {
      return secret;
    }

    public void setSecret(String secret) {
      this.secret = secret;
    }

    public Duration getValidity() {
      return validity;
    }

    public void setValidity(Duration validity) {
      this.validity = validity;
    }

    public List<String> getStrictOperations() {
      return strictOperations;
    }

    public void setStrictOperations(List<String> strictOperations) {
      this.strictOperations = strictOperations;
    }
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Duration getDefaultTtl() {
    return defaultTtl;
  }

  public void setDefaultTtl(Duration defaultTtl) {
    this.defaultTtl = defaultTtl;
  }

  public Duration getLease() {
    return lease;
  }

  public void setLease(Duration lease) {
    this.lease = lease;
  }

  public int getMismatchStatus() {
    return mismatchStatus;
  }

  public void setMismatchStatus(int mismatchStatus) {
    if (mismatchStatus != 422 && mismatchStatus != 409) {
      throw new IllegalArgumentException("idemkit.mismatch-status must be 422 or 409");
    }
    this.mismatchStatus = mismatchStatus;
  }

  public Duration getInProgressWait() {
    return inProgressWait;
  }

  public void setInProgressWait(Duration inProgressWait) {
    this.inProgressWait = inProgressWait;
  }

  public Duration getOutcomePendingRetryAfter() {
    return outcomePendingRetryAfter;
  }

  public void setOutcomePendingRetryAfter(Duration outcomePendingRetryAfter) {
    this.outcomePendingRetryAfter = outcomePendingRetryAfter;
  }

  public int getMaxStoredResponseBytes() {
    return maxStoredResponseBytes;
  }

  public void setMaxStoredResponseBytes(int maxStoredResponseBytes) {
    this.maxStoredResponseBytes = maxStoredResponseBytes;
  }

  public String getApiVersionHeader() {
    return apiVersionHeader;
  }

  public void setApiVersionHeader(String apiVersionHeader) {
    this.apiVersionHeader = apiVersionHeader;
  }

  public Set<Integer> getReplayableStatuses() {
    return replayableStatuses;
  }

  public void setReplayableStatuses(Set<Integer> replayableStatuses) {
    this.replayableStatuses = replayableStatuses;
  }

  public boolean isMigrateSchema() {
    return migrateSchema;
  }

  public void setMigrateSchema(boolean migrateSchema) {
    this.migrateSchema = migrateSchema;
  }

  public IssuedKeys getIssuedKeys() {
    return issuedKeys;
  }

  public Recovery getRecovery() {
    return recovery;
  }

  public Cleanup getCleanup() {
    return cleanup;
  }

  public Quota getQuota() {
    return quota;
  }

  public Inbox getInbox() {
    return inbox;
  }

  public Duration getClaimWait() {
    return claimWait;
  }

  public void setClaimWait(Duration claimWait) {
    this.claimWait = claimWait;
  }

  private final Protection protection = new Protection();

  public Protection getProtection() {
    return protection;
  }

  private final Database database = new Database();

  public Database getDatabase() {
    return database;
  }

  private final Store store = new Store();

  public Store getStore() {
    return store;
  }

  /**
   * {@code idemkit.store.*}: the layout of the record table (docs/scaling.md, "Records at large
   * scale").
   */
  public static class Store {

    /**
     * The record table's layout: plain (one table) or hash-partitioned (partitions of its primary
     * key, for hundreds of millions of records). It is chosen when the table is made: a new
     * database (or an empty table) gets it; an existing table with rows keeps its layout, and a
     * layout other than its own stops the start, saying so. Unset: whatever the table has, plain
     * for a new one.
     */
    private StoreLayout layout;

    /** How many hash partitions a new hash-partitioned table gets (2 to 1024), fixed then. */
    private int partitions = 16;

    public StoreLayout getLayout() {
      return layout;
    }

    public void setLayout(StoreLayout layout) {
      this.layout = layout;
    }

    public int getPartitions() {
      return partitions;
    }

    public void setPartitions(int partitions) {
      this.partitions = partitions;
    }

    /** The configured layout; null when none is. */
    public RecordLayout recordLayout() {
      if (layout == null) {
        return null;
      }
      return switch (layout) {
        case PLAIN -> RecordLayout.plain();
        case HASH_PARTITIONED -> RecordLayout.hashPartitioned(partitions);
      };
    }
  }

  /** The record table's layouts ({@link RecordLayout}). */
  public enum StoreLayout {
    /** One table. */
    PLAIN,
    /** Hash partitions of the primary key. */
    HASH_PARTITIONED
  }

  /** {@code idemkit.database.*}: what Idemkit checks of its database at start-up. */
  public static class Database {

    /**
     * What the start-up check does when the database shows it can lose acknowledged commits (in a
     * failover to an asynchronous standby, or on a crash with synchronous_commit=off): warn logs
     * one line and starts; refuse stops the start, also when the check cannot tell (no privilege to
     * see the standbys, a read error); off reads nothing. docs/failover.md.
     */
    private ReplicationCheckMode replicationCheck = ReplicationCheckMode.WARN;

    public ReplicationCheckMode getReplicationCheck() {
      return replicationCheck;
    }

    public void setReplicationCheck(ReplicationCheckMode replicationCheck) {
      this.replicationCheck = replicationCheck;
    }
  }

  /** What the start-up replication check does with an unsafe or unknown finding. */
  public enum ReplicationCheckMode {
    /** Log one warning line and start. */
    WARN,
    /** Stop the start with a one-line failure analysis. */
    REFUSE,
    /** Read nothing, say nothing. */
    OFF
  }

  /**
   * {@code idemkit.protection.*}: stored answers as sensitive data (docs/data-protection.md). All
   * off by default.
   */
  public static class Protection {

    private final Encryption encryption = new Encryption();

    private final Fingerprints fingerprint = new Fingerprints();

    /** Fields dropped or masked before an operation's answer is stored, by operation. */
    private Map<String, Redaction> redact = new LinkedHashMap<>();

    /**
     * What is kept of an operation's successful answer, by operation: {@code BODY} (default) or
     * {@code OUTCOME}; {@code REFERENCE} comes with an {@link IdempotentReference} bean.
     */
    private Map<String, dev.idemkit.ReplayMode> replayModes = new LinkedHashMap<>();

    public Encryption getEncryption() {
      return encryption;
    }

    public Fingerprints getFingerprint() {
      return fingerprint;
    }

    public Map<String, Redaction> getRedact() {
      return redact;
    }

    public void setRedact(Map<String, Redaction> redact) {
      this.redact = redact;
    }

    public Map<String, dev.idemkit.ReplayMode> getReplayModes() {
      return replayModes;
    }

    public void setReplayModes(Map<String, dev.idemkit.ReplayMode> replayModes) {
      this.replayModes = replayModes;
    }
  }

  /** {@code idemkit.protection.encryption.*}: AES-256-GCM at rest, a data key per tenant. */
  public static class Encryption {

    /**
     * Encrypts stored answers and recovery data. Turned off with master keys (or a {@code
     * KeyProvider} bean) still configured, new answers are stored in the clear and those sealed
     * earlier are still opened (read-only).
     */
    private boolean enabled = false;

    /**
     * Master keys by id, each 32 random bytes in base64; ignored when a {@code KeyProvider} bean (a
     * KMS) exists. Keep an old key until its data keys are re-wrapped.
     */
    private Map<String, String> masterKeys = new LinkedHashMap<>();

    /** The master key that wraps new data keys. */
    private String currentMasterKey = "";

    /** How long a data key stays unwrapped in memory: the delay of a shredding on other nodes. */
    private Duration keyCacheTtl = Duration.ofMinutes(1);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Map<String, String> getMasterKeys() {
      return masterKeys;
    }

    public void setMasterKeys(Map<String, String> masterKeys) {
      this.masterKeys = masterKeys;
    }

    public String getCurrentMasterKey() {
      return currentMasterKey;
    }

    public void setCurrentMasterKey(String currentMasterKey) {
      this.currentMasterKey = currentMasterKey;
    }

    public Duration getKeyCacheTtl() {
      return keyCacheTtl;
    }

    public void setKeyCacheTtl(Duration keyCacheTtl) {
      this.keyCacheTtl = keyCacheTtl;
    }
  }

  /** {@code idemkit.protection.fingerprint.*}: keyed fingerprints (HMAC-SHA-256). */
  public static class Fingerprints {

    /**
     * HMAC keys by id, each at least 32 bytes in base64. Keep a retired key for the longest window:
     * records made with it are compared with it.
     */
    private Map<String, String> hmacKeys = new LinkedHashMap<>();

    /** The HMAC key new fingerprints use; empty: plain SHA-256 ({@code v1}). */
    private String currentHmacKey = "";

    public Map<String, String> getHmacKeys() {
      return hmacKeys;
    }

    public void setHmacKeys(Map<String, String> hmacKeys) {
      this.hmacKeys = hmacKeys;
    }

    public String getCurrentHmacKey() {
      return currentHmacKey;
    }

    public void setCurrentHmacKey(String currentHmacKey) {
      this.currentHmacKey = currentHmacKey;
    }
  }

  /** JSON field paths ({@code card.cvc}) of one operation's answer. */
  public static class Redaction {

    /** Fields removed. */
    private List<String> drop = new ArrayList<>();

    /**
     * String and number fields masked but for their last four characters (a number as a string).
     */
    private List<String> mask = new ArrayList<>();

    public List<String> getDrop() {
      return drop;
    }

    public void setDrop(List<String> drop) {
      this.drop = drop;
    }

    public List<String> getMask() {
      return mask;
    }

    public void setMask(List<String> mask) {
      this.mask = mask;
    }
  }
}
