package dev.idemkit.micrometer;

/**
 * Every meter name, tag key and tag value Idemkit publishes, in one place, so dashboards and alerts
 * can refer to them and nothing else spells them.
 *
 * <p>Cardinality: meters are tagged by {@link #TAG_OPERATION} (a stable name such as {@code
 * create_payment}) and by small fixed sets of values ({@link #TAG_OUTCOME}, {@link #TAG_KIND},
 * {@link #TAG_STATE}). Never by tenant and never by idempotency key: both are unbounded, and a key
 * is a client's secret-ish identifier that must not leave the service through a meter.
 */
public final class IdempotencyMetricNames {

  private IdempotencyMetricNames() {}

  // ---- meter names ------------------------------------------------------------------------

  /** Timer: how long a request took to get its answer; tags {@code operation}, {@code outcome}. */
  public static final String REQUESTS = "idempotency.requests";

  /** Counter: requests answered with a stored response (nothing ran); tag {@code operation}. */
  public static final String REPLAY_COUNT = "idempotency.replay.count";

  /**
   * Counter: a key reused with a different command, refused (a client bug); tag {@code operation}.
   */
  public static final String CONFLICT_DIFFERENT_REQUEST_COUNT =
      "idempotency.conflict.different_request.count";

  /**
   * Gauge, in seconds: the age of the oldest record that needs recovery (an owner died, or a
   * downstream outcome is unknown), 0 when none does. No tags.
   */
  public static final String IN_PROGRESS_AGE_MAX = "idempotency.in_progress.age.max";

  /**
   * Counter: retries that came after their record's window and ran as a new operation; tag {@code
   * operation}.
   */
  public static final String EXPIRED_RETRY_COUNT = "idempotency.expired_retry.count";

  /**
   * Counter: a downstream outcome became unknown, or stayed unknown after a recovery attempt; tag
   * {@code operation}.
   */
  public static final String UNKNOWN_STATE_COUNT = "idempotency.unknown_state.count";

  /** Counter: a record changed owner; tags {@code operation}, {@code kind}. */
  public static final String TAKEOVER_COUNT = "idempotency.takeover.count";

  /**
   * Counter: an owner found its lease taken over by another; its write was rolled back; tag {@code
   * operation}.
   */
  public static final String LOST_OWNERSHIP_COUNT = "idempotency.lost_ownership.count";

  /**
   * Counter: an operation failed unexpectedly; tags {@code operation}, {@code state} (what the
   * record was left as).
   */
  public static final String FAILURE_COUNT = "idempotency.failure.count";

  /**
   * Counter: rows cleanup dropped; tag {@code kind}: {@code body} (a stored response dropped after
   * the window) or {@code record} (a record and its history deleted after the metadata retention).
   */
  public static final String CLEANUP_ROWS = "idempotency.cleanup.rows";

  /**
   * Counter: records whose outcome stayed unknown after the last recovery attempt, now waiting for
   * an operator; tag {@code operation}.
   */
  public static final String ESCALATED_COUNT = "idempotency.escalated.count";

  /** Counter: new keys refused by a tenant quota; tags {@code operation}, {@code quota}. */
  public static final String QUOTA_EXCEEDED_COUNT = "idempotency.quota_exceeded.count";

  // ---- tag keys ---------------------------------------------------------------------------

  /** The operation's name from the record's scope, e.g. {@code create_payment}. */
  public static final String TAG_OPERATION = "operation";

  /** Which answer a request got: one of the {@code OUTCOME_*} values. */
  public static final String TAG_OUTCOME = "outcome";

  /**
   * Why a record changed owner: a {@link dev.idemkit.spi.Takeover} in lower case, e.g. {@code
   * resume_abandoned}.
   */
  public static final String TAG_KIND = "kind";

  /**
   * The state a failed operation left its record in: a {@link dev.idemkit.RecordState} in lower
   * case, e.g. {@code failed_retryable}.
   */
  public static final String TAG_STATE = "state";

  /** Which cleanup walk dropped the rows: {@code body} or {@code record}. */
  public static final String TAG_CLEANUP_KIND = "kind";

  /** Which tenant quota refused a key: {@code live_records} or {@code new_keys}. */
  public static final String TAG_QUOTA = "quota";

  // ---- values of the outcome tag ----------------------------------------------------------

  /** {@link dev.idemkit.Outcome.Executed}. */
  public static final String OUTCOME_EXECUTED = "executed";

  /** {@link dev.idemkit.Outcome.Rejected}. */
  public static final String OUTCOME_REJECTED = "rejected";

  /** {@link dev.idemkit.Outcome.Replayed}. */
  public static final String OUTCOME_REPLAYED = "replayed";

  /** {@link dev.idemkit.Outcome.InProgress}. */
  public static final String OUTCOME_IN_PROGRESS = "in_progress";

  /** {@link dev.idemkit.Outcome.Mismatch}. */
  public static final String OUTCOME_MISMATCH = "mismatch";

  /** {@link dev.idemkit.Outcome.OutcomePending}. */
  public static final String OUTCOME_PENDING = "outcome_pending";

  /** {@link dev.idemkit.Outcome.QuotaExceeded}. */
  public static final String OUTCOME_QUOTA_EXCEEDED = "quota_exceeded";
}
