package dev.idemkit.spring.boot;

import dev.idemkit.ScopedKey;
import dev.idemkit.spi.IdempotencyListener;
import dev.idemkit.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Optional;
import org.springframework.http.ResponseEntity;

/**
 * The per-tenant limits on new keys ({@code idemkit.quota.*}): a new key over a limit is answered
 * 429 {@code IDEMPOTENCY_QUOTA_EXCEEDED} with Retry-After before anything is claimed, so nothing is
 * stored. A retry of a key that already has a record is never refused: its answer exists, or its
 * work is under way.
 */
public class TenantQuotas {

  /** The Retry-After when the live-records limit refuses: live records end in seconds. */
  private static final Duration LIVE_RETRY_AFTER = Duration.ofSeconds(5);

  private final IdempotencyStore store;
  private final IdemkitProperties.Quota limits;
  private final IdempotencyListener listener;

  public TenantQuotas(
      IdempotencyStore store, IdemkitProperties.Quota limits, IdempotencyListener listener) {
    this.store = store;
    this.limits = limits;
    this.listener = listener;
  }

  /** The 429 answer for {@code id} if it is a new key over a limit; empty to go on. */
  public Optional<ResponseEntity<byte[]>> refuse(ScopedKey id) {
    if (!limits.isEnabled() || store.find(id).isPresent()) {
      return Optional.empty();
    }
    if (limits.getLiveRecordsPerTenant() > 0
        && store.countLiveRecords(id.tenant()) >= limits.getLiveRecordsPerTenant()) {
      return Optional.of(
          refused(
              id,
              "live_records",
              "Your account has "
                  + limits.getLiveRecordsPerTenant()
                  + " operations in progress or awaiting recovery, the most it may have. Retry"
                  + " after Retry-After seconds, when some have finished.",
              LIVE_RETRY_AFTER));
    }
    if (limits.getNewKeysPerMinutePerTenant() > 0) {
      Optional<Duration> wait =
          store.admitNewKey(id.tenant(), limits.getNewKeysPerMinutePerTenant());
      if (wait.isPresent()) {
        return Optional.of(
            refused(
                id,
                "new_keys",
                "Your account used its "
                    + limits.getNewKeysPerMinutePerTenant()
                    + " new idempotency keys for this minute. Retry with the same key after"
                    + " Retry-After seconds.",
                wait.get()));
      }
    }
    return Optional.empty();
  }

  private ResponseEntity<byte[]> refused(
      ScopedKey id, String quota, String detail, Duration retryAfter) {
    listener.onQuotaExceeded(id, quota);
    return Problems.response(
        429,
        ErrorCode.IDEMPOTENCY_QUOTA_EXCEEDED,
        "Idempotency quota exceeded",
        detail,
        retryAfter);
  }
}
