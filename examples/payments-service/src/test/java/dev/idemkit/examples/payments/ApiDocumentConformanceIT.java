package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Currency;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Requests generated from the service's own OpenAPI document ({@code /v3/api-docs}), sent to the
 * running service, and their answers held against the same document:
 *
 * <ul>
 *   <li>a request the document allows is never refused with 400 (a rule the document does not
 *       state) and never gets a 5xx;
 *   <li>a request that breaks one rule the document states (a type, a required field, a length, a
 *       pattern, an enum, {@code minItems}, {@code additionalProperties: false}, a parameter's
 *       format, the key's syntax) is refused with a 4xx the operation documents, with one of the
 *       {@code errorCode}s documented for that status;
 *   <li>every answer has a documented status, a documented content type, a body of the documented
 *       schema, and the documented headers it must carry.
 * </ul>
 *
 * <p>The generator is small and reads only the document: schemas ({@code type}, {@code required},
 * {@code properties}, {@code additionalProperties}, {@code items}, {@code minItems}/{@code
 * maxItems}, {@code minLength}/{@code maxLength}, {@code pattern}, {@code enum}, {@code minimum}/
 * {@code maximum}, the formats {@code uuid} and {@code iso-4217}) and the service's two extensions
 * for rules across fields ({@code x-decimals-of}, {@code x-maximum-total}). A fixed seed makes a
 * failure repeatable; {@code -Dconformance.seed} and {@code -Dconformance.perOperation} change it.
 * A tenant of its own, with a live-record quota that the run cannot use up, keeps the demo tenants'
 * quotas for the other tests.
 */
@TestPropertySource(
    properties = {
      "payments.api-keys.sk_test_conformance=tenant_conformance",
      "idemkit.quota.live-records-per-tenant=1000000",
      "payments.provider.embedded-port=0",
      "payments.mail.embedded-port=0"
    })
class ApiDocumentConformanceIT extends HttpTestSupport {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final String TENANT = "sk_test_conformance";
  private static final String OPERATOR = "sk_test_admin";
  private static final long SEED = Long.getLong("conformance.seed", 38L);
  private static final int PER_OPERATION = Integer.getInteger("conformance.perOperation", 120);
  private static final Set<String> METHODS = Set.of("get", "post", "put", "patch", "delete");

  private JsonNode doc;
  private final Random random = new Random(SEED);
  private final Map<String, List<String>> knownIds = new LinkedHashMap<>();
  private final List<String> failures = new ArrayList<>();
  private int sent;

  @Test
  void generatedRequestsGetTheAnswersTheDocumentPromises() {
    HttpResponse<String> docs = send(request(uri("/v3/api-docs"), Map.of()).GET().build());
    assertThat(docs.statusCode()).isEqualTo(200);
    doc = JSON.readTree(docs.body());
    collectExamples(doc);
    createFixtures();

    int errorsBefore = ERRORS.size();
    long start = System.nanoTime();
    int operations = 0;
    for (Map.Entry<String, JsonNode> path : doc.path("paths").properties()) {
      if (!path.getKey().startsWith("/v1/test/")) {
        undocumentedMethod(path.getKey(), path.getValue());
      }
      for (Map.Entry<String, JsonNode> method : path.getValue().properties()) {
        if (!METHODS.contains(method.getKey()) || path.getKey().startsWith("/v1/test/")) {
          // /v1/test/ is this test suite's own controller (TestWidgetsController), not the API.
          continue;
        }
        operations++;
        Operation op = new Operation(path.getKey(), method.getKey(), method.getValue());
        for (int i = 0; i < PER_OPERATION; i++) {
          if (i % 10 == 9) {
            wrongKey(op);
          } else if (i % 2 == 0) {
            valid(op);
          } else {
            invalid(op);
          }
        }
      }
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    System.out.printf(
        Locale.ROOT,
        "ApiDocumentConformanceIT: %d requests over %d operations in %d ms (seed %d)%n",
        sent,
        operations,
        millis,
        SEED);
    assertThat(operations).isGreaterThan(20);
    assertThat(new ArrayList<>(ERRORS.subList(errorsBefore, ERRORS.size())))
        .as("ERROR lines logged while the generated requests ran")
        .isEmpty();
    assertThat(failures)
        .as(
            "%d of %d generated requests were not answered as the document says (seed %d)",
            failures.size(), sent, SEED)
        .isEmpty();
  }

  /**
   * Each create operation links to the operation that reads what it created, and following the link
   * with the created answer's body finds it.
   */
  @Test
  void createOperationsLinkToTheirReadsAndTheLinksLeadThere() {
    HttpResponse<String> docs = send(request(uri("/v3/api-docs"), Map.of()).GET().build());
    doc = JSON.readTree(docs.body());
    Map<String, String> created =
        Map.of(
            "/v1/payments",
            payment("conformance-link-" + UUID.randomUUID(), "10.00").replace("acc_1", "acc_conf"),
            "/v1/orders",
            """
            {"currency":"EUR","items":[{"sku":"sku-1","quantity":1,"unitPrice":"5.00"}]}""");
    for (Map.Entry<String, String> create : created.entrySet()) {
      JsonNode links =
          doc.path("paths")
              .path(create.getKey())
              .path("post")
              .path("responses")
              .path("201")
              .path("links");
      assertThat(links.isObject() && !links.isEmpty())
          .as("links of POST " + create.getKey())
          .isTrue();
      HttpResponse<String> answer = post(create.getKey(), TENANT, newKey(), create.getValue());
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(201);
      JsonNode body = JSON.readTree(answer.body());
      for (Map.Entry<String, JsonNode> link : links.properties()) {
        String operationId = link.getValue().path("operationId").asString();
        String[] target = operationPath(operationId);
        assertThat(target).as("operation " + operationId + " of link " + link.getKey()).isNotNull();
        String path = target[0];
        for (Map.Entry<String, JsonNode> parameter :
            link.getValue().path("parameters").properties()) {
          String expression = parameter.getValue().asString();
          assertThat(expression).startsWith("$response.body#");
          String value = body.at(expression.substring("$response.body#".length())).asString();
          path = path.replace("{" + parameter.getKey() + "}", value);
        }
        HttpResponse<String> read = get(path, TENANT);
        assertThat(read.statusCode())
            .as(link.getKey() + " -> GET " + path + " " + read.body())
            .isEqualTo(200);
      }
    }
  }

  /** The path and method of an operation of the document, or null. */
  private String[] operationPath(String operationId) {
    for (Map.Entry<String, JsonNode> path : doc.path("paths").properties()) {
      for (Map.Entry<String, JsonNode> method : path.getValue().properties()) {
        if (operationId.equals(method.getValue().path("operationId").asString(null))) {
          return new String[] {path.getKey(), method.getKey()};
        }
      }
    }
    return null;
  }

  /** A payment and an order of the tenant, so that reads find something. */
  private void createFixtures() {
    HttpResponse<String> payment =
        post(
            "/v1/payments",
            TENANT,
            newKey(),
            payment("conformance-" + UUID.randomUUID(), "10.00").replace("acc_1", "acc_conf"));
    assertThat(payment.statusCode()).isEqualTo(201);
    knownIds
        .computeIfAbsent("paymentId", k -> new ArrayList<>())
        .add(JSON.readTree(payment.body()).get("paymentId").asString());
    HttpResponse<String> order =
        post(
            "/v1/orders",
            TENANT,
            newKey(),
            """
            {"currency":"EUR","items":[{"sku":"sku-1","quantity":2,"unitPrice":"5.00"}]}""");
    assertThat(order.statusCode()).isEqualTo(201);
    knownIds
        .computeIfAbsent("orderId", k -> new ArrayList<>())
        .add(JSON.readTree(order.body()).get("orderId").asString());
  }

  // ---------------------------------------------------------------------------------------------
  // The three kinds of request

  private void valid(Operation op) {
    Draft draft = op.draft();
    check(op, draft, "schema-valid request", Expect.VALID);
  }

  private void invalid(Operation op) {
    Draft draft = op.draft();
    List<Runnable> breaks = new ArrayList<>();
    for (JsonNode parameter : op.parameters()) {
      breaks.add(() -> draft.breakParameter(parameter));
    }
    if (draft.body != null) {
      for (int i = 0; i < 3; i++) {
        breaks.add(() -> draft.breakBody(op.bodySchema()));
      }
    }
    if (breaks.isEmpty()) {
      // Nothing to break but the query string: a parameter with no name is refused everywhere.
      draft.rawQuery.add("=1");
      draft.why = "a query parameter without a name";
    } else {
      breaks.get(random.nextInt(breaks.size())).run();
    }
    if (draft.why == null) {
      return; // nothing of this part could be broken
    }
    check(op, draft, "schema-invalid request (" + draft.why + ")", Expect.REFUSED);
  }

  private void wrongKey(Operation op) {
    Draft draft = op.draft();
    draft.apiKey = op.admin() ? TENANT : OPERATOR;
    check(op, draft, "request with the other kind of key", Expect.REFUSED);
  }

  /** A method the path does not document: 405 with an Allow header naming the documented ones. */
  private void undocumentedMethod(String path, JsonNode item) {
    List<String> documented = new ArrayList<>();
    Operation any = null;
    for (Map.Entry<String, JsonNode> method : item.properties()) {
      if (METHODS.contains(method.getKey())) {
        documented.add(method.getKey().toUpperCase(Locale.ROOT));
        any = new Operation(path, method.getKey(), method.getValue());
      }
    }
    if (any == null) {
      return;
    }
    Draft draft = any.draft();
    for (String method : List.of("PUT", "PATCH", "DELETE", "POST")) {
      if (documented.contains(method)) {
        continue;
      }
      HttpRequest.Builder b = HttpRequest.newBuilder(uri(draft.target()));
      b.header("Authorization", "Bearer " + draft.apiKey);
      HttpResponse<String> r = send(b.method(method, HttpRequest.BodyPublishers.noBody()).build());
      sent++;
      String where =
          method + " " + draft.target() + " -> " + r.statusCode() + " " + abbreviate(r.body());
      if (r.statusCode() != 405) {
        fail("an undocumented method not answered 405: " + where);
        continue;
      }
      List<String> allow =
          r.headers().firstValue("Allow").stream()
              .flatMap(a -> java.util.Arrays.stream(a.split(",")))
              .map(String::trim)
              .toList();
      if (!allow.containsAll(documented)) {
        fail("a 405 whose Allow " + allow + " does not name " + documented + ": " + where);
      }
    }
  }

  private enum Expect {
    VALID,
    REFUSED
  }

  private void check(Operation op, Draft draft, String what, Expect expect) {
    HttpResponse<String> r = send(draft.build());
    sent++;
    int status = r.statusCode();
    String errorCode = errorCode(r);
    String where =
        what
            + ": "
            + op.method.toUpperCase(Locale.ROOT)
            + " "
            + draft.target()
            + (draft.body == null ? "" : " " + draft.bodyText())
            + " -> "
            + status
            + (errorCode == null ? "" : " " + errorCode)
            + " "
            + abbreviate(r.body());
    if (status >= 500) {
      fail("a 5xx for " + where);
      return;
    }
    if (expect == Expect.VALID && status == 400) {
      fail("refused for a rule the document does not state: " + where);
      return;
    }
    if (expect == Expect.REFUSED && (status < 400 || status >= 500)) {
      fail("not refused although the document forbids it: " + where);
      return;
    }
    JsonNode response = op.node.path("responses").path(String.valueOf(status));
    if (response.isMissingNode()) {
      response = op.node.path("responses").path("default");
    }
    if (response.isMissingNode()) {
      fail("an undocumented status for " + where);
      return;
    }
    conforms(response, r, status, errorCode, where);
  }

  /** The answer against its documented response: content type, body schema, codes, headers. */
  private void conforms(
      JsonNode response, HttpResponse<String> r, int status, String errorCode, String where) {
    JsonNode content = response.path("content");
    String type =
        r.headers().firstValue("Content-Type").map(t -> t.split(";")[0].trim()).orElse(null);
    if (content.isObject() && !content.isEmpty()) {
      if (type == null || !content.has(type) && !(content.has("*/*"))) {
        fail("an undocumented content type " + type + " for " + where);
        return;
      }
      JsonNode media = content.has(type) ? content.get(type) : content.get("*/*");
      if (type.endsWith("json")) {
        JsonNode body;
        try {
          body = JSON.readTree(r.body());
        } catch (RuntimeException e) {
          fail("a body that is not JSON for " + where);
          return;
        }
        List<String> problems = new ArrayList<>();
        matches(media.path("schema"), body, "$", problems);
        if (!problems.isEmpty()) {
          fail("a body not of the documented schema (" + problems.get(0) + ") for " + where);
        }
        JsonNode examples = media.path("examples");
        if (errorCode != null && examples.isObject() && !examples.has(errorCode)) {
          fail("an errorCode not documented for " + status + " for " + where);
        }
      }
    }
    for (Map.Entry<String, JsonNode> header : response.path("headers").properties()) {
      String name = header.getKey();
      var value = r.headers().firstValue(name);
      boolean mustHave =
          header.getValue().path("required").asBoolean(false)
              || name.equals("Location") && status == 201
              || name.equals("Retry-After") && status != 409 && status != 410;
      if (value.isEmpty()) {
        if (mustHave) {
          fail("no documented header " + name + " on " + where);
        }
        continue;
      }
      List<String> problems = new ArrayList<>();
      JsonNode schema = header.getValue().path("schema");
      JsonNode typed =
          value.get().matches("-?[0-9]+") && "integer".equals(type(schema))
              ? JSON.getNodeFactory().numberNode(Long.parseLong(value.get()))
              : JSON.getNodeFactory().stringNode(value.get());
      matches(schema, typed, name, problems);
      if (!problems.isEmpty()) {
        fail("a header not of its documented schema (" + problems.get(0) + ") on " + where);
      }
    }
  }

  private void fail(String failure) {
    failures.add(failure);
    if (failures.size() <= 30) {
      System.err.println("ApiDocumentConformanceIT: " + failure);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // One operation, and one request being drafted for it

  private final class Operation {
    final String path;
    final String method;
    final JsonNode node;

    Operation(String path, String method, JsonNode node) {
      this.path = path;
      this.method = method;
      this.node = node;
    }

    boolean admin() {
      return path.startsWith("/v1/admin/");
    }

    List<JsonNode> parameters() {
      List<JsonNode> list = new ArrayList<>();
      JsonNode parameters = node.path("parameters");
      for (int i = 0; i < parameters.size(); i++) {
        list.add(parameters.get(i));
      }
      return list;
    }

    JsonNode bodySchema() {
      return node.path("requestBody").path("content").path("application/json").path("schema");
    }

    Draft draft() {
      Draft draft = new Draft(this);
      for (JsonNode parameter : parameters()) {
        boolean required = parameter.path("required").asBoolean(false);
        if (required || random.nextBoolean()) {
          draft.set(parameter, validParameter(parameter));
        }
      }
      JsonNode body = bodySchema();
      if (!body.isMissingNode()) {
        draft.body = validValue(body);
      }
      return draft;
    }
  }

  private final class Draft {
    final Operation op;
    final Map<String, String> pathValues = new LinkedHashMap<>();
    final List<String> rawQuery = new ArrayList<>();
    final Map<String, String> headers = new LinkedHashMap<>();
    Object body;
    String apiKey;
    String why;

    Draft(Operation op) {
      this.op = op;
      this.apiKey = op.admin() ? OPERATOR : TENANT;
    }

    void set(JsonNode parameter, String value) {
      String name = parameter.path("name").asString();
      switch (parameter.path("in").asString()) {
        case "path" -> pathValues.put(name, value);
        case "query" -> {
          rawQuery.removeIf(q -> q.startsWith(encode(name) + "="));
          rawQuery.add(encode(name) + "=" + encode(value));
        }
        case "header" -> headers.put(name, value);
        default -> {}
      }
    }

    /** Breaks one rule the document states for this parameter. */
    void breakParameter(JsonNode parameter) {
      String name = parameter.path("name").asString();
      String in = parameter.path("in").asString();
      JsonNode schema = resolve(parameter.path("schema"));
      boolean required = parameter.path("required").asBoolean(false);
      List<String> bad = new ArrayList<>(invalidStrings(schema));
      if (in.equals("header")) {
        // What HTTP can carry in a field value: visible ASCII, no whitespace at either end.
        bad.removeIf(s -> !s.matches("[\\x21-\\x7E](?:[\\x20-\\x7E]*[\\x21-\\x7E])?"));
      }
      if (in.equals("path")) {
        // A path segment cannot be absent; a control character is refused by the gate.
        if (!bad.isEmpty() && random.nextBoolean()) {
          pathValues.put(name, bad.get(random.nextInt(bad.size())));
          why = "path parameter " + name + " breaks its schema";
        } else {
          pathValues.put(name, "a\u0001b");
          why = "path parameter " + name + " with a control character";
        }
        return;
      }
      int choice = random.nextInt(3);
      if (required && choice == 0) {
        if (in.equals("query")) {
          rawQuery.removeIf(q -> q.startsWith(encode(name) + "="));
        } else {
          headers.remove(name);
        }
        why = "required " + in + " parameter " + name + " missing";
      } else if (in.equals("query") && choice == 1) {
        String value = validParameter(parameter);
        rawQuery.add(encode(name) + "=" + encode(value));
        rawQuery.add(encode(name) + "=" + encode(value));
        why = "query parameter " + name + " sent twice";
      } else if (!bad.isEmpty()) {
        set(parameter, bad.get(random.nextInt(bad.size())));
        why = in + " parameter " + name + " breaks its schema";
      }
    }

    /** Breaks one rule the document states for the body or a field in it. */
    void breakBody(JsonNode schema) {
      why = breakValue(schema, body, "body", v -> body = v);
    }

    HttpRequest build() {
      HttpRequest.Builder b = HttpRequest.newBuilder(uri(target()));
      b.header("Authorization", "Bearer " + apiKey);
      headers.forEach(b::header);
      if (body != null) {
        b.header("Content-Type", "application/json");
        b.method(
            op.method.toUpperCase(Locale.ROOT),
            HttpRequest.BodyPublishers.ofString(bodyText(), StandardCharsets.UTF_8));
      } else {
        b.method(op.method.toUpperCase(Locale.ROOT), HttpRequest.BodyPublishers.noBody());
      }
      return b.build();
    }

    String target() {
      String p = op.path;
      for (Map.Entry<String, String> v : pathValues.entrySet()) {
        p = p.replace("{" + v.getKey() + "}", encodePath(v.getValue()));
      }
      return rawQuery.isEmpty() ? p : p + "?" + String.join("&", rawQuery);
    }

    String bodyText() {
      return JSON.writeValueAsString(body);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Values the document allows

  private String validParameter(JsonNode parameter) {
    String name = parameter.path("name").asString();
    JsonNode schema = resolve(parameter.path("schema"));
    if ("uuid".equals(schema.path("format").asString(null))
        && knownIds.containsKey(name)
        && random.nextInt(3) > 0) {
      List<String> ids = knownIds.get(name);
      return ids.get(random.nextInt(ids.size()));
    }
    if (name.equals("Idempotency-Key")) {
      return switch (random.nextInt(4)) {
        case 0 -> "\"" + UUID.randomUUID() + "\"";
        case 1 -> randomMatching(schema, BARE_KEY_CHARS, 1, 255);
        default -> UUID.randomUUID().toString();
      };
    }
    Object value = validValue(schema);
    return String.valueOf(value);
  }

  /** Characters of a bare key (and of text generally): visible ASCII without '"', ',' or ';'. */
  private static final String BARE_KEY_CHARS =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~!#$&'()*+/:<=>?@[]^`{|}";

  private static final String[] ALPHABETS = {
    "abcdefghijklmnopqrstuvwxyz0123456789_-",
    "0123456789.",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,:;!?'\"/\\()éßø日本€\u200B",
    BARE_KEY_CHARS
  };

  private Object validValue(JsonNode schemaRef) {
    JsonNode schema = resolve(schemaRef);
    if (schema.has("enum")) {
      JsonNode values = schema.get("enum");
      return plain(values.get(random.nextInt(values.size())));
    }
    String type = type(schema);
    switch (type) {
      case "object" -> {
        Map<String, Object> object = new LinkedHashMap<>();
        Set<String> required = required(schema);
        for (Map.Entry<String, JsonNode> property : schema.path("properties").properties()) {
          if (required.contains(property.getKey()) || random.nextBoolean()) {
            object.put(property.getKey(), validValue(property.getValue()));
          }
        }
        fitAcrossFields(schema, object);
        return object;
      }
      case "array" -> {
        int min = schema.path("minItems").asInt(0);
        int max = schema.path("maxItems").asInt(min + 5);
        int size = min + random.nextInt(Math.max(1, Math.min(max, min + 4) - min + 1));
        if (random.nextInt(40) == 0) {
          size = max; // the edge, now and then
        }
        List<Object> list = new ArrayList<>();
        for (int i = 0; i < size; i++) {
          list.add(validValue(schema.path("items")));
        }
        return list;
      }
      case "integer" -> {
        long min = schema.path("minimum").asLong(0);
        long max = schema.path("maximum").asLong(Math.max(min, 1000));
        return switch (random.nextInt(4)) {
          case 0 -> min;
          case 1 -> max;
          default -> min + (long) (random.nextDouble() * (max - min));
        };
      }
      case "boolean" -> {
        return random.nextBoolean();
      }
      default -> {
        return validString(schema);
      }
    }
  }

  private String validString(JsonNode schema) {
    String format = schema.path("format").asString("");
    if (format.equals("uuid")) {
      return UUID.randomUUID().toString();
    }
    if (format.equals("iso-4217")) {
      List<Currency> currencies =
          Currency.getAvailableCurrencies().stream()
              .filter(c -> c.getDefaultFractionDigits() >= 0)
              .sorted((a, b) -> a.getCurrencyCode().compareTo(b.getCurrencyCode()))
              .toList();
      String code = currencies.get(random.nextInt(currencies.size())).getCurrencyCode();
      return random.nextBoolean() ? code : code.toLowerCase(Locale.ROOT);
    }
    int min = Math.max(schema.path("minLength").asInt(0), 1);
    int max = schema.path("maxLength").asInt(64);
    if (random.nextInt(4) == 0 || schema.has("pattern")) {
      List<String> fitting =
          examples.stream().filter(e -> stringProblem(schema, e) == null).toList();
      if (!fitting.isEmpty() && random.nextBoolean()) {
        return fitting.get(random.nextInt(fitting.size()));
      }
    }
    for (String alphabet : shuffled(ALPHABETS)) {
      String s = randomMatching(schema, alphabet, min, max);
      if (s != null) {
        return s;
      }
    }
    List<String> fitting = examples.stream().filter(e -> stringProblem(schema, e) == null).toList();
    if (!fitting.isEmpty()) {
      return fitting.get(random.nextInt(fitting.size()));
    }
    throw new AssertionError("cannot generate a value for " + schema);
  }

  /** Every string example and enum value of the document, each also in upper and lower case. */
  private final List<String> examples = new ArrayList<>();

  private void collectExamples(JsonNode node) {
    if (node.isObject()) {
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        if ((e.getKey().equals("example") || e.getKey().equals("enum"))
            && !e.getValue().isObject()) {
          List<JsonNode> values = new ArrayList<>();
          if (e.getValue().isArray()) {
            for (int i = 0; i < e.getValue().size(); i++) {
              values.add(e.getValue().get(i));
            }
          } else {
            values.add(e.getValue());
          }
          for (JsonNode v : values) {
            if (v.isString() && !examples.contains(v.asString())) {
              examples.add(v.asString());
              examples.add(v.asString().toUpperCase(Locale.ROOT));
              examples.add(v.asString().toLowerCase(Locale.ROOT));
            }
          }
        } else {
          collectExamples(e.getValue());
        }
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        collectExamples(node.get(i));
      }
    }
  }

  /** A random string of the alphabet within the lengths that matches the schema, or null. */
  private String randomMatching(JsonNode schema, String alphabet, int min, int max) {
    for (int attempt = 0; attempt < 300; attempt++) {
      int length =
          switch (random.nextInt(6)) {
            case 0 -> min;
            case 1 -> max;
            default -> min + random.nextInt(Math.max(1, Math.min(max, min + 20) - min + 1));
          };
      StringBuilder s = new StringBuilder();
      for (int i = 0; i < length; i++) {
        s.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      if (stringProblem(schema, s.toString()) == null) {
        return s.toString();
      }
    }
    return null;
  }

  /** The rules across fields the document states in its extensions. */
  private void fitAcrossFields(JsonNode schema, Map<String, Object> object) {
    for (Map.Entry<String, JsonNode> property : schema.path("properties").properties()) {
      JsonNode p = resolve(property.getValue());
      String of = p.path("x-decimals-of").asString(null);
      if (of != null && object.get(property.getKey()) instanceof String amount) {
        object.put(property.getKey(), fitDecimals(amount, object.get(of)));
      }
    }
    if (schema.has("x-maximum-total") && object.get("items") instanceof List<?> items) {
      BigDecimal cap = new BigDecimal(schema.get("x-maximum-total").asString());
      JsonNode itemSchema = resolve(resolve(schema.path("properties").path("items")).path("items"));
      for (Object item : items) {
        @SuppressWarnings("unchecked")
        Map<String, Object> line = (Map<String, Object>) item;
        fitAcrossFields(itemSchema, line);
        line.put("unitPrice", fitDecimals((String) line.get("unitPrice"), object.get("currency")));
      }
      while (total(items).compareTo(cap) > 0) {
        for (Object item : items) {
          @SuppressWarnings("unchecked")
          Map<String, Object> line = (Map<String, Object>) item;
          line.put("quantity", 1L);
          line.put("unitPrice", "1");
        }
      }
    }
  }

  private static BigDecimal total(List<?> items) {
    BigDecimal total = BigDecimal.ZERO;
    for (Object item : items) {
      Map<?, ?> line = (Map<?, ?>) item;
      total =
          total.add(
              new BigDecimal((String) line.get("unitPrice"))
                  .multiply(BigDecimal.valueOf(((Number) line.get("quantity")).longValue())));
    }
    return total;
  }

  private static String fitDecimals(String amount, Object currency) {
    int digits =
        currency instanceof String c
            ? Currency.getInstance(c.toUpperCase(Locale.ROOT)).getDefaultFractionDigits()
            : 2;
    BigDecimal value = new BigDecimal(amount);
    if (value.stripTrailingZeros().scale() <= digits) {
      return amount;
    }
    BigDecimal cut = value.setScale(digits, java.math.RoundingMode.DOWN);
    return cut.signum() > 0 ? cut.toPlainString() : "1";
  }

  // ---------------------------------------------------------------------------------------------
  // Values the document forbids

  /**
   * Breaks one rule of {@code schemaRef} in {@code value}; says which, or null if none could be.
   */
  private String breakValue(
      JsonNode schemaRef, Object value, String where, java.util.function.Consumer<Object> set) {
    JsonNode schema = resolve(schemaRef);
    String type = type(schema);
    List<String> options = new ArrayList<>();
    options.add("type");
    if (type.equals("object") && value instanceof Map<?, ?> map && !map.isEmpty()) {
      options.add("field");
      options.add("field");
      options.add("field");
    }
    if (type.equals("object") && !required(schema).isEmpty()) {
      options.add("required");
    }
    if (type.equals("object") && schema.path("additionalProperties").isBoolean()) {
      options.add("unknown");
    }
    if (type.equals("array") && schema.has("minItems")) {
      options.add("minItems");
    }
    if (type.equals("array") && schema.has("maxItems")) {
      options.add("maxItems");
    }
    if (type.equals("array") && value instanceof List<?> list && !list.isEmpty()) {
      options.add("item");
    }
    if (type.equals("string") && !invalidStrings(schema).isEmpty()) {
      options.add("string");
    }
    if (type.equals("integer") && (schema.has("minimum") || schema.has("maximum"))) {
      options.add("range");
    }
    String option = options.get(random.nextInt(options.size()));
    switch (option) {
      case "type" -> {
        Object wrong =
            switch (type) {
              case "string" -> random.nextBoolean() ? (Object) 10.5 : (Object) Boolean.TRUE;
              case "integer", "number" -> random.nextBoolean() ? "1" : (Object) Boolean.FALSE;
              case "boolean" -> "true";
              case "array" -> Map.of();
              default -> List.of();
            };
        set.accept(wrong);
        return where + " of the wrong JSON type";
      }
      case "field" -> {
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) value;
        List<String> names = new ArrayList<>(map.keySet());
        String name = names.get(random.nextInt(names.size()));
        return breakValue(
            schema.path("properties").path(name),
            map.get(name),
            where + "." + name,
            v -> map.put(name, v));
      }
      case "required" -> {
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) value;
        List<String> names = new ArrayList<>(required(schema));
        String name = names.get(random.nextInt(names.size()));
        map.remove(name);
        return where + "." + name + " (required) missing";
      }
      case "unknown" -> {
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) value;
        map.put("unexpectedField", "x");
        return where + " with a field the schema does not name";
      }
      case "minItems" -> {
        @SuppressWarnings("unchecked")
        List<Object> list = (List<Object>) value;
        while (list.size() >= schema.get("minItems").asInt()) {
          list.remove(list.size() - 1);
        }
        return where + " with fewer items than minItems";
      }
      case "maxItems" -> {
        @SuppressWarnings("unchecked")
        List<Object> list = (List<Object>) value;
        while (list.size() <= schema.get("maxItems").asInt()) {
          list.add(validValue(schema.path("items")));
        }
        return where + " with more items than maxItems";
      }
      case "item" -> {
        @SuppressWarnings("unchecked")
        List<Object> list = (List<Object>) value;
        int i = random.nextInt(list.size());
        return breakValue(
            schema.path("items"), list.get(i), where + "[" + i + "]", v -> list.set(i, v));
      }
      case "string" -> {
        List<String> bad = invalidStrings(schema);
        String s = bad.get(random.nextInt(bad.size()));
        set.accept(s);
        return where + " breaks its schema (" + stringProblem(schema, s) + ")";
      }
      case "range" -> {
        set.accept(
            schema.has("maximum") && (random.nextBoolean() || !schema.has("minimum"))
                ? schema.get("maximum").asLong() + 1
                : schema.get("minimum").asLong() - 1);
        return where + " out of its range";
      }
      default -> throw new AssertionError(option);
    }
  }

  /** Strings that each break a rule of the string schema: a length, the pattern, enum, format. */
  private List<String> invalidStrings(JsonNode schema) {
    List<String> bad = new ArrayList<>();
    if (!"string".equals(type(schema))) {
      return bad;
    }
    List<String> candidates = new ArrayList<>();
    int max = schema.path("maxLength").asInt(-1);
    if (max >= 0) {
      candidates.add("a".repeat(max + 1));
      candidates.add("1".repeat(max + 1));
    }
    candidates.add("");
    candidates.add(" ");
    candidates.add("a\u0001b");
    candidates.add("zero\u200Bwidth");
    candidates.add("rtl\u202Eoverride");
    candidates.add("tab\there");
    candidates.add("not-a-uuid");
    candidates.add("1.234567891");
    candidates.add("-5.00");
    candidates.add("0");
    candidates.add("10,00");
    candidates.add("XQZ");
    candidates.add("EURO");
    candidates.add("PAYPAL");
    candidates.add("with space");
    candidates.add("a,b");
    candidates.add("\"unbalanced");
    candidates.add("..");
    candidates.add("2000000000");
    for (String candidate : candidates) {
      if (stringProblem(schema, candidate) != null) {
        bad.add(candidate);
      }
    }
    return bad;
  }

  // ---------------------------------------------------------------------------------------------
  // The document's schemas

  /** Why {@code s} is not valid for the string schema, or null. */
  private static String stringProblem(JsonNode schema, String s) {
    int length = s.codePointCount(0, s.length());
    if (schema.has("minLength") && length < schema.get("minLength").asInt()) {
      return "shorter than minLength";
    }
    if (schema.has("maxLength") && length > schema.get("maxLength").asInt()) {
      return "longer than maxLength";
    }
    if (schema.has("pattern")
        && !Pattern.compile(schema.get("pattern").asString()).matcher(s).find()) {
      return "does not match " + schema.get("pattern").asString();
    }
    if (schema.has("enum")) {
      boolean found = false;
      for (int i = 0; i < schema.get("enum").size(); i++) {
        found |= s.equals(schema.get("enum").get(i).asString());
      }
      if (!found) {
        return "not in the enum";
      }
    }
    String format = schema.path("format").asString("");
    if (format.equals("uuid")) {
      try {
        UUID.fromString(s);
      } catch (IllegalArgumentException e) {
        return "not a uuid";
      }
    }
    if (format.equals("iso-4217")) {
      try {
        if (Currency.getInstance(s.toUpperCase(Locale.ROOT)).getDefaultFractionDigits() < 0) {
          return "not an ISO 4217 currency with minor units";
        }
      } catch (IllegalArgumentException e) {
        return "not an ISO 4217 currency";
      }
    }
    return null;
  }

  /** Checks a JSON value against a schema of the document: types, required, enum, format. */
  private void matches(JsonNode schemaRef, JsonNode value, String at, List<String> problems) {
    JsonNode schema = resolve(schemaRef);
    if (schema.isMissingNode() || schema.isEmpty()) {
      return;
    }
    Set<String> types = types(schema);
    if (value.isNull()) {
      if (!types.contains("null")
          && !schema.path("nullable").asBoolean(false)
          && !types.isEmpty()) {
        problems.add(at + " is null");
      }
      return;
    }
    String actual =
        value.isObject()
            ? "object"
            : value.isArray()
                ? "array"
                : value.isString()
                    ? "string"
                    : value.isBoolean()
                        ? "boolean"
                        : value.isIntegralNumber() ? "integer" : "number";
    if (!types.isEmpty()
        && !types.contains(actual)
        && !(actual.equals("integer") && types.contains("number"))) {
      problems.add(at + " is " + actual + ", documented " + types);
      return;
    }
    switch (actual) {
      case "object" -> {
        for (String name : required(schema)) {
          if (!value.has(name)) {
            problems.add(at + "." + name + " (required) is missing");
          }
        }
        for (Map.Entry<String, JsonNode> property : value.properties()) {
          JsonNode propertySchema = schema.path("properties").path(property.getKey());
          if (propertySchema.isMissingNode()) {
            propertySchema = schema.path("additionalProperties");
          }
          if (propertySchema.isObject()) {
            matches(propertySchema, property.getValue(), at + "." + property.getKey(), problems);
          }
        }
      }
      case "array" -> {
        for (int i = 0; i < value.size(); i++) {
          matches(schema.path("items"), value.get(i), at + "[" + i + "]", problems);
        }
      }
      case "string" -> {
        String problem =
            schema.has("enum") || "uuid".equals(schema.path("format").asString(""))
                ? stringProblem(schema, value.asString())
                : null;
        if (problem != null) {
          problems.add(at + " " + problem);
        }
      }
      default -> {}
    }
  }

  private JsonNode resolve(JsonNode schema) {
    JsonNode s = schema;
    while (s.has("$ref")) {
      String ref = s.get("$ref").asString();
      s = doc.path("components").path("schemas").path(ref.substring(ref.lastIndexOf('/') + 1));
    }
    return s;
  }

  private static Set<String> types(JsonNode schema) {
    JsonNode types = schema.path("type");
    if (types.isString()) {
      return Set.of(types.asString());
    }
    Set<String> set = new java.util.HashSet<>();
    for (int i = 0; i < types.size(); i++) {
      set.add(types.get(i).asString());
    }
    if (set.isEmpty() && schema.has("properties")) {
      set.add("object");
    }
    return set;
  }

  private static String type(JsonNode schema) {
    Set<String> types = types(schema);
    return types.stream().filter(t -> !t.equals("null")).findFirst().orElse("string");
  }

  private static Set<String> required(JsonNode schema) {
    Set<String> set = new java.util.LinkedHashSet<>();
    JsonNode required = schema.path("required");
    for (int i = 0; i < required.size(); i++) {
      set.add(required.get(i).asString());
    }
    return set;
  }

  private static Object plain(JsonNode node) {
    return node.isIntegralNumber() ? (Object) node.asLong() : node.asString();
  }

  private <T> List<T> shuffled(T[] items) {
    List<T> list = new ArrayList<>(List.of(items));
    java.util.Collections.shuffle(list, random);
    return list;
  }

  private static String errorCode(HttpResponse<String> r) {
    if (!r.headers().firstValue("Content-Type").orElse("").startsWith("application/problem+json")) {
      return null;
    }
    try {
      return JSON.readTree(r.body()).path("errorCode").asString(null);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A path segment: unreserved characters as they are, everything else percent-encoded. */
  private static String encodePath(String s) {
    StringBuilder out = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c >= 'a' && c <= 'z'
          || c >= 'A' && c <= 'Z'
          || c >= '0' && c <= '9'
          || "-._~!$&'()*+,=:@".indexOf(c) >= 0) {
        out.append((char) c);
      } else {
        out.append('%').append(String.format(Locale.ROOT, "%02X", c));
      }
    }
    return out.toString();
  }

  private static String abbreviate(String s) {
    String one = s == null ? "" : s.replaceAll("\\s+", " ");
    return one.length() > 300 ? one.substring(0, 300) + "…" : one;
  }
}
