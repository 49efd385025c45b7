package dev.idemkit.examples.payments;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The service on a random port over real HTTP, on an embedded PostgreSQL in a fresh directory of
 * this test JVM. Requests go through {@link HttpClient}, so headers are sent exactly as written.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "payments.provider.embedded-port=0",
      "payments.mail.embedded-port=0",
      "idemkit.recovery.interval=PT0.5S",
      "idemkit.recovery.backoff=PT0.2S",
      // The demo tenants, named here: a deployment's own tenant key (sk_test_shred below) ends the
      // shipped demo keys (web/ApiKeys).
      "payments.api-keys.sk_test_demo_a=tenant_demo_a",
      "payments.api-keys.sk_test_demo_b=tenant_demo_b",
      // A tenant of its own for crypto-shredding, and an operation replayed by outcome only
      // (DataProtectionIT).
      "payments.api-keys.sk_test_shred=tenant_shred",
      "payments.api-keys.sk_test_unsettled=tenant_unsettled",
      // A tenant whose data ErasureIT erases.
      "payments.api-keys.sk_test_erase=tenant_erase",
      // A tenant whose data key DocumentedAnswersIT rotates (only a configured tenant has one).
      "payments.api-keys.sk_test_doc_answers=tenant_doc_answers",
      "idemkit.protection.replay-modes.test_outcome=OUTCOME"
    })
abstract class HttpTestSupport {

  static final String TENANT_A = "sk_test_demo_a";
  static final String TENANT_B = "sk_test_demo_b";

  /** Every ERROR logged while the tests run. */
  static final List<String> ERRORS = new CopyOnWriteArrayList<>();

  static {
    try {
      Path dataDir = Files.createTempDirectory("payments-it-pg").toAbsolutePath();
      System.setProperty("idemkit.embedded.data-dir", dataDir.toString());
      // The embedded server lives as long as this JVM and is stopped by its own shutdown hook;
      // its folder goes once it has stopped (it removes postmaster.pid on the way out).
      Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteOnceStopped(dataDir)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @LocalServerPort int port;
  @Autowired JdbcClient jdbc;

  @BeforeEach
  void attachAppenderAgain() {
    // Spring Boot resets logging when a context starts; put the error counter back.
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    if (root.getAppender("idemkit-test-errors") == null) {
      AppenderBase<ILoggingEvent> errors =
          new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
              if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
                ERRORS.add(event.getLoggerName() + ": " + event.getFormattedMessage());
              }
            }
          };
      errors.setName("idemkit-test-errors");
      errors.setContext(root.getLoggerContext());
      errors.start();
      root.addAppender(errors);
    }
  }

  /**
   * A data directory for a test's own embedded PostgreSQL (a service started apart from the shared
   * one), deleted at exit once its server has stopped.
   */
  static Path ownDataDir(String prefix) throws IOException {
    Path dataDir = Files.createTempDirectory(prefix).toAbsolutePath();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteOnceStopped(dataDir)));
    return dataDir;
  }

  /**
   * The service on {@code dataDir}'s embedded PostgreSQL, its server, provider and mail simulator
   * on free ports, with {@code args} besides.
   */
  static ConfigurableApplicationContext startService(Path dataDir, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--idemkit.embedded.data-dir=" + dataDir);
    all.add("--server.port=0");
    all.add("--payments.provider.embedded-port=0");
    all.add("--payments.mail.embedded-port=0");
    return new SpringApplicationBuilder(PaymentsApplication.class).run(all.toArray(String[]::new));
  }

  static void deleteOnceStopped(Path dataDir) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (Files.exists(dataDir.resolve("postmaster.pid")) && System.nanoTime() < deadline) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
    }
    if (!Files.exists(dataDir.resolve("postmaster.pid"))) {
      deleteTree(dataDir);
    }
  }

  /** Removes a database folder the tests made, once its server has stopped. */
  static void deleteTree(Path dir) {
    // A second pass catches what a server that was still stopping wrote during the first.
    for (int pass = 0; pass < 3 && Files.exists(dir); pass++) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      } catch (IOException | UncheckedIOException e) {
        // retried below
      }
      if (Files.exists(dir)) {
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
    if (Files.exists(dir)) {
      System.err.println("Could not remove " + dir);
    }
  }

  static String newKey() {
    return "key-" + UUID.randomUUID();
  }

  URI uri(String path) {
    return URI.create("http://localhost:" + port + path);
  }

  /** A request with the given headers; a header value of {@code null} sends no such header. */
  static HttpRequest.Builder request(URI uri, Map<String, String> headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30));
    headers.forEach(
        (name, value) -> {
          if (value != null) {
            b.header(name, value);
          }
        });
    return b;
  }

  HttpResponse<String> post(String path, String apiKey, String idempotencyKey, String json) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri(path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json));
    if (apiKey != null) {
      b.header("Authorization", "Bearer " + apiKey);
    }
    if (idempotencyKey != null) {
      b.header("Idempotency-Key", idempotencyKey);
    }
    return send(b.build());
  }

  HttpResponse<String> get(String path, String apiKey) {
    return send(
        HttpRequest.newBuilder(uri(path))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + apiKey)
            .GET()
            .build());
  }

  static HttpResponse<String> send(HttpRequest request) {
    try {
      return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static String payment(String reference, String amount) {
    return """
        {"accountId":"acc_1","amount":"%s","currency":"EUR","merchantReference":"%s"}"""
        .formatted(amount, reference);
  }

  long paymentsFor(String reference) {
    return jdbc.sql("select count(*) from payment where merchant_reference = ?")
        .param(reference)
        .query(Long.class)
        .single();
  }

  long recordsFor(String key) {
    return jdbc.sql("select count(*) from idemkit_record where idem_key = ?")
        .param(key)
        .query(Long.class)
        .single();
  }

  long allRecords() {
    return jdbc.sql("select count(*) from idemkit_record").query(Long.class).single();
  }
}
