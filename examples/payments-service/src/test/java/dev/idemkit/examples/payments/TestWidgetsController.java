package dev.idemkit.examples.payments;

import dev.idemkit.spring.boot.Idempotent;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Tests only: an endpoint replayed by outcome ({@code
 * idemkit.protection.replay-modes.test_outcome=OUTCOME}, set in {@link HttpTestSupport}), whose
 * answer holds something that must not be kept.
 */
@RestController
class TestWidgetsController {

  static final AtomicInteger CREATED = new AtomicInteger();

  @PostMapping(path = "/v1/test/widgets", consumes = "application/json")
  @Idempotent(operation = "test_outcome")
  public ResponseEntity<Map<String, String>> create() {
    CREATED.incrementAndGet();
    String id = "w_" + UUID.randomUUID();
    return ResponseEntity.created(URI.create("/v1/widgets/" + id))
        .body(Map.of("id", id, "secret", "s3cr3t"));
  }

  /** The same operation answering without naming what it did: nothing to refer to. */
  @PostMapping(path = "/v1/test/widgets/touch", consumes = "application/json")
  @Idempotent(operation = "test_outcome")
  public ResponseEntity<Map<String, String>> touch() {
    CREATED.incrementAndGet();
    return ResponseEntity.ok(Map.of("secret", "t0uch3d"));
  }
}
