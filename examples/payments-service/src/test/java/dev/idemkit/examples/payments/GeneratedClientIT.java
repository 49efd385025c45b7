package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import io.swagger.parser.OpenAPIParser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openapitools.codegen.DefaultGenerator;
import org.openapitools.codegen.config.CodegenConfigurator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAPI document is the truth: this test fetches it from the running service, validates it,
 * generates a Java client from it with the standard generator (openapi-generator, {@code java},
 * library {@code native}), compiles that client, and runs the walk-through of the README and
 * docs/payments-service.md through it (src/test/resources/generated-client/ReadmeWalkthrough.java):
 * create a payment, replay it, reuse the key for another amount, create an order and confirm its
 * payment.
 */
class GeneratedClientIT extends HttpTestSupport {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final Path WORK = Path.of("target", "generated-client");

  private static String document;

  @BeforeAll
  static void clean() throws IOException {
    if (Files.exists(WORK)) {
      try (Stream<Path> files = Files.walk(WORK)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    Files.createDirectories(WORK);
  }

  String document() {
    if (document == null) {
      HttpResponse<String> response = send(request(uri("/v3/api-docs"), Map.of()).GET().build());
      assertThat(response.statusCode()).isEqualTo(200);
      document = response.body();
    }
    return document;
  }

  @Test
  void theDocumentValidates() {
    ParseOptions options = new ParseOptions();
    options.setResolve(true);
    SwaggerParseResult result = new OpenAPIParser().readContents(document(), null, options);
    assertThat(result.getMessages()).isEmpty();
    assertThat(result.getOpenAPI().getPaths()).containsKeys("/v1/payments", "/v1/orders");
  }

  @Test
  void theDocumentStatesRealAnswers() {
    JsonNode doc = JSON.readTree(document());
    JsonNode create = doc.at("/paths/~1v1~1payments/post");
    assertThat(create.get("operationId").asString()).isEqualTo("createPayment");
    assertThat(create.at("/responses/201/content/application~1json/schema/$ref").asString())
        .isEqualTo("#/components/schemas/PaymentResponse");
    assertThat(create.at("/responses/201/headers").has("Idempotent-Replayed")).isTrue();
    assertThat(create.at("/responses/409/headers").has("Retry-After")).isTrue();
    assertThat(create.at("/responses/422/content/application~1problem+json/schema/$ref").asString())
        .isEqualTo("#/components/schemas/Problem");
    assertThat(
            create
                .at("/responses/422/content/application~1problem+json/examples")
                .has("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST"))
        .isTrue();
    for (String status :
        List.of("400", "401", "402", "403", "409", "413", "415", "422", "429", "503")) {
      assertThat(create.at("/responses").has(status)).as(status).isTrue();
    }
    JsonNode key = null;
    for (JsonNode p : create.get("parameters")) {
      if (p.get("name").asString().equals("Idempotency-Key")) {
        key = p;
      }
    }
    assertThat(key).isNotNull();
    assertThat(key.get("required").asBoolean()).isTrue();
    assertThat(key.get("description").asString()).contains("24 hours");
    JsonNode list = doc.at("/paths/~1v1~1payments/get");
    assertThat(list.get("operationId").asString()).isEqualTo("listPayments");
    assertThat(list.at("/responses/200/content/application~1json/schema/items/$ref").asString())
        .isEqualTo("#/components/schemas/PaymentResponse");
    assertThat(
            list.at("/responses/400/content/application~1problem+json/examples")
                .has("MISSING_QUERY_PARAMETER"))
        .isTrue();
    assertThat(list.get("parameters").toString())
        .contains("\"merchantReference\"", "\"accountId\"");
    assertThat(doc.at("/paths/~1v1~1orders/post/responses/201").isMissingNode()).isFalse();
    assertThat(
            doc.at("/paths/~1v1~1orders~1{orderId}~1confirm-payment/post/operationId").asString())
        .isEqualTo("confirmOrderPayment");
    assertThat(doc.at("/components/securitySchemes/bearer/scheme").asString()).isEqualTo("bearer");
    String properties = doc.at("/components/schemas").toString();
    assertThat(properties)
        .doesNotContain("amountValid", "currencyValid", "pricesValid", "totalWithinLimit", "(?i)");
  }

  @Test
  @SuppressWarnings("unchecked")
  void aClientGeneratedFromTheDocumentRunsTheReadmeWalkthrough() throws Exception {
    Path spec = WORK.resolve("payments-api.json");
    Files.writeString(spec, document());
    Path sources = WORK.resolve("client");
    CodegenConfigurator configurator =
        new CodegenConfigurator()
            .setGeneratorName("java")
            .setLibrary("native")
            .setInputSpec(spec.toAbsolutePath().toString())
            .setOutputDir(sources.toAbsolutePath().toString())
            .setApiPackage("dev.idemkit.examples.client.api")
            .setModelPackage("dev.idemkit.examples.client.model")
            .setInvokerPackage("dev.idemkit.examples.client")
            .addAdditionalProperty("openApiNullable", false)
            .addAdditionalProperty("useJakartaEe", true)
            .addAdditionalProperty("hideGenerationTimestamp", true)
            .addAdditionalProperty("annotationLibrary", "none")
            .addGlobalProperty("apiTests", "false")
            .addGlobalProperty("modelTests", "false")
            .addGlobalProperty("apiDocs", "false")
            .addGlobalProperty("modelDocs", "false");
    List<File> generated = new DefaultGenerator().opts(configurator.toClientOptInput()).generate();
    assertThat(generated).isNotEmpty();

    Path walkthrough = sources.resolve("src/main/java/ReadmeWalkthrough.java");
    try (var in = getClass().getResourceAsStream("/generated-client/ReadmeWalkthrough.java")) {
      Files.copy(in, walkthrough);
    }
    Path classes = WORK.resolve("classes");
    compile(sources.resolve("src/main/java"), classes);

    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
      Function<Map<String, String>, Map<String, Object>> run =
          (Function<Map<String, String>, Map<String, Object>>)
              loader.loadClass("ReadmeWalkthrough").getDeclaredConstructor().newInstance();
      String reference = "gen-client-" + newKey();
      Map<String, Object> seen =
          run.apply(
              Map.of(
                  "baseUri",
                  "http://localhost:" + port,
                  "apiKey",
                  TENANT_A,
                  "key",
                  newKey(),
                  "merchantReference",
                  reference));
      assertThat(seen).doesNotContainKey("failure");
      assertThat(seen)
          .containsEntry("created.status", 201)
          .containsEntry("get.status", "COMPLETED")
          .containsEntry("ledger.entries", 2)
          .containsEntry("ledger.firstDirection", "DEBIT")
          .containsEntry("order.total", "25.00")
          .containsEntry("replay.status", 201)
          .containsEntry("replay.Idempotent-Replayed", "true")
          .containsEntry("mismatch.status", 422)
          .containsEntry("mismatch.errorCode", "IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST")
          .containsEntry("order.status", 201)
          .containsEntry("confirm.status", 200)
          .containsEntry("confirm.orderStatus", "PAID");
      assertThat(seen.get("replay.paymentId")).isEqualTo(seen.get("created.paymentId"));
      assertThat(seen.get("created.location"))
          .isEqualTo("/v1/payments/" + seen.get("created.paymentId"));
      assertThat(paymentsFor(reference)).isEqualTo(1);
    }
  }

  private static void compile(Path sourceRoot, Path classes) throws IOException {
    Files.createDirectories(classes);
    List<File> files;
    try (Stream<Path> walk = Files.walk(sourceRoot)) {
      files = walk.filter(p -> p.toString().endsWith(".java")).map(Path::toFile).toList();
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter diagnostics = new StringWriter();
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    try (StandardJavaFileManager fm =
        javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
      Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromFiles(files);
      boolean ok =
          javac
              .getTask(
                  diagnostics,
                  fm,
                  null,
                  List.of(
                      "-d",
                      classes.toString(),
                      "-classpath",
                      classpath,
                      "--release",
                      "17",
                      "-proc:none",
                      "-nowarn"),
                  null,
                  units)
              .call();
      assertThat(ok).as("the generated client compiles:\n%s", diagnostics).isTrue();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }
}
