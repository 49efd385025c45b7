package dev.idemkit.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings under {@code idemkit.*}. */
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
   * Statuses of handler errors (Spring ErrorResponse exceptions) stored and replayed as
   * deterministic business rejections. Others (validation, auth, 5xx) leave no record.
   */
  private Set<Integer> replayableStatuses = new LinkedHashSet<>(List.of(402, 404, 409, 410, 422));

  /** Apply Idemkit's schema at start-up (after the application's own Flyway, if any). */
  private boolean migrateSchema = true;

  private final IssuedKeys issuedKeys = new IssuedKeys();

  private final Recovery recovery = new Recovery();

  /** The background recovery worker (phased operations with a RecoverableOperation bean). */
  public static class Recovery {
    /** Whether the worker runs. */
    private boolean enabled = true;

    /** Pause between passes. */
    private Duration interval = Duration.ofSeconds(5);

    /** Records taken per pass. */
    private int batchSize = 50;

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

    /** How long an issued key may be used. */
    private Duration validity = Duration.ofHours(24);

    /** Operations that refuse keys the server did not issue (400 IDEMPOTENCY_KEY_NOT_ISSUED). */
    private List<String> strictOperations = new ArrayList<>();

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
}
