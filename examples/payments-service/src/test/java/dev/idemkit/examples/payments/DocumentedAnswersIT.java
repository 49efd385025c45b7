package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAPI document against the service's real answers, endpoint by endpoint: every answer's
 * status is documented for its operation, with its media type; the headers that carry the contract
 * ({@code Location}, {@code Idempotent-Replayed}, {@code Retry-After}) are documented where they
 * are sent; and every body fits its documented schema: no field the schema does not name, every
 * required one present, each of its type and format, {@code null} only where the schema allows it,
 * and no success answer documented as a free-form object.
 */
class DocumentedAnswersIT extends HttpTestSupport {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final List<String> CONTRACT_HEADERS =
      List.of("Location", "Idempotent-Replayed", "Retry-After");

  private JsonNode doc;
  private final List<String> mismatches = new ArrayList<>();

  @BeforeEach
  void fetchTheDocument() {
    HttpResponse<String> r = send(request(uri("/v3/api-docs"), Map.of()).GET().build());
    assertThat(r.statusCode()).isEqualTo(200);
    doc = JSON.readTree(r.body());
  }

  @Test
  void paymentsAnswerAsDocumented() {
    String reference = "doc-" + newKey();
    String key = newKey();
    HttpResponse<String> created = post("/v1/payments", TENANT_A, key, payment(reference, "10.00"));
    check("POST", "/v1/payments", created, 201);
    check(
        "POST",
        "/v1/payments",
        post("/v1/payments", TENANT_A, key, payment(reference, "10.00")),
        201);
    assertThat(created.headers().firstValue("Location")).isPresent();
    String paymentId = JSON.readTree(created.body()).get("paymentId").asString();

    check("GET", "/v1/payments/{paymentId}", get("/v1/payments/" + paymentId, TENANT_A), 200);
    check("GET", "/v1/payments", get("/v1/payments?merchantReference=" + reference, TENANT_A), 200);
    check(
        "GET",
        "/v1/payments/{paymentId}/ledger-entries",
        eventually(
            () -> get("/v1/payments/" + paymentId + "/ledger-entries", TENANT_A),
            r -> r.body().contains("PAYMENT_DEBIT")),
        200);
    check(
        "GET",
        "/v1/accounts/{accountId}/balance",
        get("/v1/accounts/acc_1/balance", TENANT_A),
        200);
    check(
        "GET",
        "/v1/receipts",
        eventually(
            () -> get("/v1/receipts?paymentId=" + paymentId, TENANT_A),
            r -> r.body().contains("deliveryKey")),
        200);
    check(
        "POST",
        "/v1/idempotency-keys",
        post("/v1/idempotency-keys", TENANT_A, null, "{\"operation\":\"create_payment\"}"),
        201);

    // Refusals, and the stored refusals replayed with Idempotent-Replayed.
    String declineKey = newKey();
    String declined = payment("doc-" + newKey(), "5.00");
    for (int i = 0; i < 2; i++) {
      check(
          "POST",
          "/v1/payments",
          send(
              request(
                      uri("/v1/payments"),
                      Map.of(
                          "Authorization",
                          "Bearer " + TENANT_A,
                          "Content-Type",
                          "application/json",
                          "Idempotency-Key",
                          declineKey,
                          "X-Provider-Fault",
                          "decline"))
                  .POST(HttpRequest.BodyPublishers.ofString(declined))
                  .build()),
          402);
    }
    String other = newKey();
    check(
        "POST",
        "/v1/payments",
        post("/v1/payments", TENANT_A, other, payment(reference, "10.00")),
        409);
    HttpResponse<String> replayedRefusal =
        post("/v1/payments", TENANT_A, other, payment(reference, "10.00"));
    assertThat(replayedRefusal.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    check("POST", "/v1/payments", replayedRefusal, 409);
    check(
        "POST",
        "/v1/payments",
        post("/v1/payments", TENANT_A, key, payment(reference, "99.00")),
        422);
    check(
        "POST",
        "/v1/payments",
        post("/v1/payments", TENANT_A, null, payment(reference, "1.00")),
        400);
    check(
        "POST",
        "/v1/payments",
        post("/v1/payments", TENANT_A, newKey(), payment("doc-" + newKey(), "1.001")),
        400);
    check(
        "POST",
        "/v1/payments",
        post("/v1/payments", null, newKey(), payment(reference, "1.00")),
        401);
    check(
        "GET", "/v1/payments/{paymentId}", get("/v1/payments/" + UUID.randomUUID(), TENANT_A), 404);
    check(
        "POST",
        "/v1/payments",
        send(
            request(
                    uri("/v1/payments"),
                    Map.of(
                        "Authorization",
                        "Bearer " + TENANT_A,
                        "Content-Type",
                        "text/plain",
                        "Idempotency-Key",
                        newKey()))
                .POST(HttpRequest.BodyPublishers.ofString("hello"))
                .build()),
        415);

    // An outcome lost downstream: 409 with Retry-After; meanwhile the payment is not charged.
    String lost = "doc-" + newKey();
    check(
        "POST",
        "/v1/payments",
        send(
            request(
                    uri("/v1/payments"),
                    Map.of(
                        "Authorization",
                        "Bearer " + TENANT_A,
                        "Content-Type",
                        "application/json",
                        "Idempotency-Key",
                        newKey(),
                        "X-Provider-Fault",
                        "drop-after-charge"))
                .POST(HttpRequest.BodyPublishers.ofString(payment(lost, "7.00")))
                .build()),
        409);
    check("GET", "/v1/payments", get("/v1/payments?merchantReference=" + lost, TENANT_A), 200);

    assertThat(mismatches).as("answers that differ from the OpenAPI document").isEmpty();
  }

  @Test
  void ordersAnswerAsDocumented() {
    String orderBody =
        "{\"currency\":\"EUR\",\"items\":[{\"sku\":\"book\",\"quantity\":2,\"unitPrice\":\"12.50\"}]}";
    HttpResponse<String> order = post("/v1/orders", TENANT_A, newKey(), orderBody);
    check("POST", "/v1/orders", order, 201);
    String orderId = JSON.readTree(order.body()).get("orderId").asString();
    check("GET", "/v1/orders/{orderId}", get("/v1/orders/" + orderId, TENANT_A), 200);
    check(
        "GET",
        "/v1/orders/{orderId}/shipment",
        get("/v1/orders/" + orderId + "/shipment", TENANT_A),
        404);

    String confirm = "/v1/orders/" + orderId + "/confirm-payment";
    String template = "/v1/orders/{orderId}/confirm-payment";
    String confirmKey = newKey();
    for (int i = 0; i < 2; i++) {
      check(
          "POST",
          template,
          post(confirm, TENANT_A, confirmKey, "{\"amount\":\"25.00\",\"currency\":\"EUR\"}"),
          200);
    }
    String wrongKey = newKey();
    UUID noSuchOrder = UUID.randomUUID();
    for (int i = 0; i < 2; i++) {
      check(
          "POST",
          template,
          post(
              "/v1/orders/" + noSuchOrder + "/confirm-payment",
              TENANT_A,
              wrongKey,
              "{\"amount\":\"25.00\",\"currency\":\"EUR\"}"),
          404);
    }
    check("GET", "/v1/orders/{orderId}", get("/v1/orders/" + orderId, TENANT_A), 200);
    check(
        "GET",
        "/v1/orders/{orderId}/shipment",
        eventually(
            () -> get("/v1/orders/" + orderId + "/shipment", TENANT_A), r -> r.statusCode() == 200),
        200);
    check("POST", "/v1/orders", post("/v1/orders", TENANT_A, null, orderBody), 400);
    check("GET", "/v1/orders/{orderId}", get("/v1/orders/" + orderId, "sk_test_admin"), 403);
    check(
        "GET",
        "/v1/orders/{orderId}",
        send(
            request(
                    uri("/v1/orders/" + orderId),
                    Map.of("Authorization", "Bearer " + TENANT_A, "Accept", "application/xml"))
                .GET()
                .build()),
        406);
    // A header HTTP does not allow is refused by the server itself, before any handler.
    RawHttp.Reply malformed =
        RawHttp.exchange(
            port,
            "GET",
            "/v1/orders/" + orderId,
            List.of("Authorization: Bearer " + TENANT_A, "X-Note: a\u0001b"),
            null);
    check(
        "GET",
        "/v1/orders/{orderId}",
        malformed.status(),
        name -> Optional.ofNullable(malformed.header(name)),
        malformed.body(),
        400);

    assertThat(mismatches).as("answers that differ from the OpenAPI document").isEmpty();
  }

  @Test
  void documentedPatternsRefuseWhatTheServiceRefuses() {
    // JSON Schema patterns match anywhere in a value (ECMA-262 search, as Matcher.find does).
    String accountId =
        doc.at("/components/schemas/CreatePaymentRequest/properties/accountId/pattern").asString();
    // A choice of fixed words is documented as an enum.
    List<String> operations = new ArrayList<>();
    doc.at("/components/schemas/IssueKeyRequest/properties/operation/enum")
        .forEach(v -> operations.add(v.asString()));
    List<String> outcomes = new ArrayList<>();
    doc.at("/components/schemas/Resolution/properties/outcome/enum")
        .forEach(v -> outcomes.add(v.asString()));

    String refusedAccount =
        "{\"accountId\":\"acc 1!\",\"amount\":\"1.00\",\"currency\":\"EUR\",\"merchantReference\":\"r\"}";
    assertThat(post("/v1/payments", TENANT_A, newKey(), refusedAccount).statusCode())
        .isEqualTo(400);
    assertThat(java.util.regex.Pattern.compile(accountId).matcher("acc 1!").find()).isFalse();
    assertThat(java.util.regex.Pattern.compile(accountId).matcher("acc_1").find()).isTrue();

    assertThat(
            post("/v1/idempotency-keys", TENANT_A, null, "{\"operation\":\"xcreate_payment\"}")
                .statusCode())
        .isEqualTo(400);
    assertThat(operations)
        .containsExactlyInAnyOrder("create_payment", "confirm_payment", "create_order");
    assertThat(outcomes).containsExactlyInAnyOrder("APPLIED", "NOT_APPLIED");

    // A key with a space inside is refused, in either form; the document's pattern says so too.
    String key = doc.at("/paths/~1v1~1payments/post/parameters/0/schema/pattern").asString();
    for (String spaced : List.of("a b", "\"a b\"")) {
      assertThat(post("/v1/payments", TENANT_A, spaced, payment("doc-" + newKey(), "1.00")).body())
          .contains("IDEMPOTENCY_KEY_INVALID");
      assertThat(java.util.regex.Pattern.compile(key).matcher(spaced).find()).as(spaced).isFalse();
    }
    assertThat(java.util.regex.Pattern.compile(key).matcher("\"a\\\"b\"").find()).isTrue();
  }

  @Test
  void invalidPathParametersAreDocumentedWhereTheyCanHappen() {
    check("GET", "/v1/payments/{paymentId}", get("/v1/payments/not-a-uuid", TENANT_A), 400);
    // The operator endpoints check the tenant and key they are given.
    String tooLong = "a".repeat(300);
    String admin = "sk_test_admin";
    check(
        "POST",
        "/v1/admin/tenants/{tenant}/data-keys",
        send(
            request(
                    uri("/v1/admin/tenants/" + tooLong + "/data-keys"),
                    Map.of("Authorization", "Bearer " + admin))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build()),
        400);
    check(
        "DELETE",
        "/v1/admin/tenants/{tenant}/data-keys",
        send(
            request(
                    uri("/v1/admin/tenants/" + tooLong + "/data-keys"),
                    Map.of("Authorization", "Bearer " + admin))
                .DELETE()
                .build()),
        400);
    check(
        "GET",
        "/v1/admin/idempotency/records/{tenant}/{operation}/{key}",
        get("/v1/admin/idempotency/records/tenant_demo_a/create_payment/" + tooLong, admin),
        400);
    check(
        "GET",
        "/v1/admin/idempotency/records/{tenant}/{operation}/{key}",
        get("/v1/admin/idempotency/records/" + tooLong + "/create_payment/k1", admin),
        400);
    check(
        "GET",
        "/v1/admin/idempotency/records/{tenant}/{operation}",
        get("/v1/admin/idempotency/records/tenant_demo_a/create_payment?key=" + tooLong, admin),
        400);
    check(
        "GET",
        "/v1/admin/idempotency/records/{tenant}/{operation}/{key}",
        get("/v1/admin/idempotency/records/tenant_demo_a/create_payment/" + newKey(), admin),
        404);
    String resolution = "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"doc test\"}";
    check(
        "POST",
        "/v1/admin/idempotency/records/{tenant}/{operation}/{key}/resolution",
        send(
            request(
                    uri(
                        "/v1/admin/idempotency/records/tenant_demo_a/create_payment/"
                            + tooLong
                            + "/resolution"),
                    Map.of("Authorization", "Bearer " + admin, "Content-Type", "application/json"))
                .POST(HttpRequest.BodyPublishers.ofString(resolution))
                .build()),
        400);
    // An account name is any string: no value of it is an invalid id.
    assertThat(
            doc.at(
                    "/paths/~1v1~1accounts~1{accountId}~1balance/get/responses/400/content/"
                        + "application~1problem+json/examples")
                .has("INVALID_PATH_PARAMETER"))
        .isFalse();

    assertThat(mismatches).as("answers that differ from the OpenAPI document").isEmpty();
  }

  @Test
  void operatorAnswersAsDocumented() {
    String admin = "sk_test_admin";
    String key = newKey();
    check(
        "POST",
        "/v1/payments",
        post("/v1/payments", TENANT_A, key, payment("doc-" + newKey(), "4.00")),
        201);
    String record = "/v1/admin/idempotency/records/tenant_demo_a/create_payment/";
    check(
        "GET",
        "/v1/admin/idempotency/records/{tenant}/{operation}/{key}",
        get(record + key, admin),
        200);
    check(
        "GET",
        "/v1/admin/idempotency/records/{tenant}/{operation}",
        get("/v1/admin/idempotency/records/tenant_demo_a/create_payment?key=" + key, admin),
        200);
    check(
        "GET", "/v1/admin/idempotency/recovery", get("/v1/admin/idempotency/recovery", admin), 200);
    check(
        "POST",
        "/v1/admin/idempotency/records/{tenant}/{operation}/{key}/resolution",
        send(
            request(
                    uri(record + key + "/resolution"),
                    Map.of("Authorization", "Bearer " + admin, "Content-Type", "application/json"))
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"outcome\":\"NOT_APPLIED\",\"reason\":\"doc test\"}"))
                .build()),
        409);
    check(
        "POST",
        "/v1/admin/tenants/{tenant}/data-keys",
        send(
            request(
                    uri("/v1/admin/tenants/tenant_doc_answers/data-keys"),
                    Map.of("Authorization", "Bearer " + admin))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build()),
        200);

    assertThat(mismatches).as("answers that differ from the OpenAPI document").isEmpty();
  }

  /**
   * The events operator endpoints, with a parked event, a parked message and a parked mail planted
   * (and removed again: the test classes share one database), so that each list's items are checked
   * too, and the re-queue refusals.
   */
  @Test
  void eventsOperatorAnswersAsDocumented() {
    String admin = "sk_test_admin";
    String eventId = UUID.randomUUID().toString();
    String messageId = UUID.randomUUID().toString();
    String deliveryKey = "doc_answers_" + UUID.randomUUID();
    try {
      jdbc.sql(
              """
              insert into idemkit_outbox (event_id, event_type, tenant, aggregate_type,
                  aggregate_id, sequence, occurred_at, payload, attempts, next_attempt_at,
                  last_error, parked_at)
              values (?::uuid, 'DocAnswers', 'tenant_demo_a', 'doc_answers', ?, 1, now(), '{}', 8,
                  now(), 'broker refused', now())
              """)
          .params(eventId, eventId)
          .update();
      jdbc.sql(
              """
              insert into idemkit_inbox (consumer_name, message_id, status, attempts, received_at,
                  last_error, event_type, tenant, aggregate_type, aggregate_id, sequence,
                  occurred_at, payload)
              values ('shipping', ?::uuid, 'PARKED', 5, now(), 'carrier down', 'OrderPaid',
                  'tenant_demo_a', 'order', ?, 1, now(), '{}')
              """)
          .params(messageId, UUID.randomUUID().toString())
          .update();
      jdbc.sql(
              """
              insert into idemkit_delivery (delivery_key, channel, payload, status, attempts,
                  created_at, next_attempt_at, last_error)
              values (?, 'mail', '{}', 'PARKED', 5, now(), now(), 'mail service answered 503')
              """)
          .param(deliveryKey)
          .update();

      for (String path :
          List.of(
              "/v1/admin/events/outbox",
              "/v1/admin/events/outbox/parked",
              "/v1/admin/events/inbox/parked",
              "/v1/admin/events/inbox/held",
              "/v1/admin/events/deliveries/parked")) {
        check("GET", path, get(path, admin), 200);
      }
      assertThat(get("/v1/admin/events/outbox/parked", admin).body()).contains(eventId);
      assertThat(get("/v1/admin/events/inbox/parked", admin).body()).contains(messageId);
      assertThat(get("/v1/admin/events/deliveries/parked", admin).body()).contains(deliveryKey);

      // Re-queued, the planted rows would be sent and applied: only the refusals are asked for.
      check(
          "POST",
          "/v1/admin/events/deliveries/parked/{key}/requeue",
          post("/v1/admin/events/deliveries/parked/nothing_parked/requeue", admin, null, "{}"),
          404);
      check(
          "POST",
          "/v1/admin/events/outbox/parked/{eventId}/requeue",
          post(
              "/v1/admin/events/outbox/parked/" + UUID.randomUUID() + "/requeue",
              admin,
              null,
              "{}"),
          404);
      check(
          "POST",
          "/v1/admin/events/inbox/{consumer}/parked/{messageId}/requeue",
          post(
              "/v1/admin/events/inbox/nobody/parked/" + UUID.randomUUID() + "/requeue",
              admin,
              null,
              "{}"),
          404);
    } finally {
      jdbc.sql("delete from idemkit_outbox where event_id = ?::uuid").param(eventId).update();
      jdbc.sql(
              "delete from idemkit_inbox where consumer_name = 'shipping' and message_id = ?::uuid")
          .param(messageId)
          .update();
      jdbc.sql("delete from idemkit_delivery where delivery_key = ?").param(deliveryKey).update();
    }

    assertThat(mismatches).as("answers that differ from the OpenAPI document").isEmpty();
  }

  private static HttpResponse<String> eventually(
      Supplier<HttpResponse<String>> request,
      java.util.function.Predicate<HttpResponse<String>> done) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    HttpResponse<String> r = request.get();
    while (!done.test(r) && System.nanoTime() < deadline) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      r = request.get();
    }
    return r;
  }

  /** Records every way the answer differs from what the document says of it. */
  private void check(String method, String path, HttpResponse<String> r, int expectedStatus) {
    check(method, path, r.statusCode(), r.headers()::firstValue, r.body(), expectedStatus);
  }

  private void check(
      String method,
      String path,
      int status,
      Function<String, Optional<String>> headers,
      String body,
      int expectedStatus) {
    String where = method + " " + path + " " + status;
    assertThat(status).as(where + ": " + body).isEqualTo(expectedStatus);
    JsonNode operation = doc.path("paths").path(path).path(method.toLowerCase(Locale.ROOT));
    assertThat(operation.isMissingNode()).as(method + " " + path + " is documented").isFalse();
    JsonNode response = operation.path("responses").path(String.valueOf(status));
    if (response.isMissingNode()) {
      mismatches.add(where + ": status not documented");
      return;
    }
    for (String header : CONTRACT_HEADERS) {
      if (headers.apply(header).isPresent() && !response.path("headers").has(header)) {
        mismatches.add(where + ": header " + header + " sent but not documented");
      }
    }
    String mediaType = headers.apply("Content-Type").orElse("").split(";")[0].trim();
    if (body.isEmpty()) {
      return;
    }
    JsonNode media = response.path("content").path(mediaType);
    if (media.isMissingNode()) {
      mismatches.add(where + ": media type " + mediaType + " not documented");
      return;
    }
    JsonNode value = JSON.readTree(body);
    conforms(value, media.path("schema"), where + " body");
    String errorCode = value.path("errorCode").asString("");
    if (!errorCode.isEmpty() && !media.path("examples").has(errorCode)) {
      mismatches.add(where + ": errorCode " + errorCode + " is not among the documented ones");
    }
  }

  private void conforms(JsonNode value, JsonNode schema, String where) {
    if (schema.has("$ref")) {
      String ref = schema.get("$ref").asString();
      conforms(value, doc.at(ref.substring(1)), where);
      return;
    }
    List<String> types = new ArrayList<>();
    JsonNode type = schema.path("type");
    if (type.isArray()) {
      type.values().forEach(t -> types.add(t.asString()));
    } else if (type.isString()) {
      types.add(type.asString());
    } else if (schema.has("properties")) {
      types.add("object");
    }
    if (schema.path("nullable").asBoolean(false)) {
      types.add("null");
    }
    if (value.isNull()) {
      if (!types.contains("null")) {
        mismatches.add(where + ": null where the schema allows " + types);
      }
      return;
    }
    if (value.isObject()) {
      if (!types.contains("object")) {
        mismatches.add(where + ": an object where the schema says " + types);
        return;
      }
      JsonNode properties = schema.path("properties");
      if (properties.isMissingNode() || properties.isEmpty()) {
        if (where.endsWith(" body")) {
          // A whole answer documented as "some object" tells a client nothing.
          mismatches.add(where + ": documented as a free-form object, answered " + value);
        }
        return;
      }
      for (Map.Entry<String, JsonNode> field : value.properties()) {
        if (!properties.has(field.getKey())) {
          mismatches.add(where + ": field " + field.getKey() + " is not in the schema");
        } else {
          conforms(field.getValue(), properties.get(field.getKey()), where + "." + field.getKey());
        }
      }
      for (JsonNode required : schema.path("required")) {
        if (!value.has(required.asString())) {
          mismatches.add(where + ": required field " + required.asString() + " is absent");
        }
      }
    } else if (value.isArray()) {
      if (!types.contains("array")) {
        mismatches.add(where + ": an array where the schema says " + types);
        return;
      }
      int i = 0;
      for (JsonNode item : value.values()) {
        conforms(item, schema.path("items"), where + "[" + i++ + "]");
      }
    } else if (value.isString()) {
      if (!types.contains("string")) {
        mismatches.add(where + ": a string where the schema says " + types);
        return;
      }
      String format = schema.path("format").asString("");
      try {
        if (format.equals("uuid")) {
          UUID.fromString(value.asString());
        } else if (format.equals("date-time")) {
          OffsetDateTime.parse(value.asString());
        }
      } catch (RuntimeException e) {
        mismatches.add(where + ": '" + value.asString() + "' is not a " + format);
      }
      JsonNode values = schema.path("enum");
      if (values.isArray()) {
        boolean listed = false;
        for (JsonNode v : values) {
          listed |= v.asString().equals(value.asString());
        }
        if (!listed) {
          mismatches.add(where + ": '" + value.asString() + "' is not one of " + values);
        }
      }
    } else if (value.isIntegralNumber()) {
      if (!types.contains("integer") && !types.contains("number")) {
        mismatches.add(where + ": an integer where the schema says " + types);
      }
    } else if (value.isNumber()) {
      if (!types.contains("number")) {
        mismatches.add(where + ": a number where the schema says " + types);
      }
    } else if (value.isBoolean()) {
      if (!types.contains("boolean")) {
        mismatches.add(where + ": a boolean where the schema says " + types);
      }
    }
  }
}
