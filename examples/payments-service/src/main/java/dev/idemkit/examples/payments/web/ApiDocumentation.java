package dev.idemkit.examples.payments.web;

import dev.idemkit.PhasedOperation;
import dev.idemkit.spring.boot.ErrorCode;
import dev.idemkit.spring.boot.Idempotent;
import dev.idemkit.spring.boot.IssuedKeys;
import dev.idemkit.spring.boot.Problems;
import dev.idemkit.spring.boot.TenantShards;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.examples.Example;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.HeaderParameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityScheme;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springframework.core.MethodParameter;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.method.HandlerMethod;

/**
 * Makes the OpenAPI document ({@code /v3/api-docs}) say what the service really answers, so that a
 * client generated from it works: every error is one shared {@code Problem} schema under {@code
 * application/problem+json}, listed per status with the {@code errorCode} values that status can
 * carry at that endpoint (one example each), and {@code errorCode} is one enum of every code the
 * service answers with, so a generated client reads it typed. The answers come from what the code
 * does, not from per-endpoint prose:
 *
 * <ul>
 *   <li>every {@code /v1} endpoint: 400 for a malformed path, query string or request (the gate,
 *       Tomcat), 401 and 403 ({@code ApiGateFilter}), 429 with {@code Retry-After}, 431 (headers
 *       too large or too many), 500; 406 where content negotiation applies (not on idempotent
 *       endpoints, which answer their stored bytes);
 *   <li>an endpoint with a body: 400 for the body, 413, 415; one with path ids: 400 for them; one
 *       with a required query parameter: 400 without it;
 *   <li>an {@link Idempotent @Idempotent} endpoint: its {@code Idempotency-Key} header (required or
 *       not, format, expiry window, strict or not), {@code Idempotent-Replayed} on its answers, the
 *       idempotency layer's 400/409/422 (and 503 for phased operations) with {@code Retry-After};
 *   <li>a handler's own refusals: its {@link ProblemAnswer} annotations;
 *   <li>the refusals of filters that run before it: {@link FilterAnswers} beans;
 *   <li>with tenants on shards: 503 {@code TENANT_MOVING} with {@code Retry-After} on every
 *       tenant's endpoint and on the operator endpoints on one tenant (docs/scaling.md), and with
 *       regions 307 {@code TENANT_HOMED_ELSEWHERE} with {@code Location} on every endpoint (an
 *       operator's request is placed by its name as a tenant's is; docs/regions.md).
 * </ul>
 */
public final class ApiDocumentation {

  /** The shared schema of every error answer. */
  public static final String PROBLEM = "Problem";

  /** The schema of {@code errorCode}: every code the service answers with, as an enum. */
  public static final String ERROR_CODE = "ErrorCode";

  /** The security scheme's name. */
  public static final String BEARER = "bearer";

  static final String PROBLEM_JSON = "application/problem+json";

  private ApiDocumentation() {}

  /** The components every operation refers to: the problem schema and the bearer scheme. */
  public static Components components() {
    Schema<Object> problem =
        new ObjectSchema()
            .description(
                "An RFC 9457 problem. errorCode is stable and machine-readable; detail says what"
                    + " to do.")
            .addProperty("type", new StringSchema().description("URI of the problem type"))
            .addProperty("title", new StringSchema())
            .addProperty("status", new IntegerSchema().description("the HTTP status"))
            .addProperty("detail", new StringSchema().description("what to do about it"))
            .addProperty("errorCode", new Schema<>().$ref(ERROR_CODE))
            .addProperty("instance", new StringSchema())
            .addProperty(
                "paymentId",
                new StringSchema()
                    .format("uuid")
                    .description(
                        "PAYMENT_DECLINED and PAYMENT_ABANDONED only: the payment refused"))
            .addProperty(
                "existingPaymentId",
                new StringSchema()
                    .format("uuid")
                    .description("PAYMENT_ALREADY_EXISTS only: the payment that exists"));
    problem.setRequired(List.of("type", "status", "errorCode"));
    StringSchema errorCode = new StringSchema();
    errorCode
        .description(
            "Stable error code; each answer of each operation lists the codes it can carry.")
        .setEnum(ErrorTitles.codes());
    return new Components()
        .addSchemas(PROBLEM, problem)
        .addSchemas(ERROR_CODE, errorCode)
        .addSecuritySchemes(
            BEARER,
            new SecurityScheme()
                .type(SecurityScheme.Type.HTTP)
                .scheme("bearer")
                .description(
                    "Authorization: Bearer <API key>. The key names your tenant; idempotency keys"
                        + " are scoped to it."));
  }

  /**
   * Adds the answers described in the class comment to each operation.
   *
   * @param defaultTtl {@code idemkit.default-ttl}, for endpoints that do not set their own window
   * @param mismatchStatus {@code idemkit.mismatch-status}
   * @param issuedKeys which operations accept only issued keys
   * @param filters the refusals of filters that run before the handlers
   * @param shards the shards the service runs on; null on one database
   */
  public static OperationCustomizer answers(
      Duration defaultTtl,
      int mismatchStatus,
      IssuedKeys issuedKeys,
      List<FilterAnswers> filters,
      TenantShards shards) {
    return (operation, handler) -> {
      new Answers(operation, handler)
          .describe(defaultTtl, mismatchStatus, issuedKeys, filters, shards);
      return operation;
    };
  }

  /** One operation's answers, merged per status. */
  private static final class Answers {
    private final Operation operation;
    private final HandlerMethod handler;
    private final Map<String, Set<String>> codes = new TreeMap<>();
    private final Set<String> retryAfter = new LinkedHashSet<>();
    private final Set<String> location = new LinkedHashSet<>();

    Answers(Operation operation, HandlerMethod handler) {
      this.operation = operation;
      this.handler = handler;
    }

    void describe(
        Duration defaultTtl,
        int mismatchStatus,
        IssuedKeys issuedKeys,
        List<FilterAnswers> filters,
        TenantShards shards) {
      if (operation.getResponses() == null) {
        operation.setResponses(new ApiResponses());
      }
      boolean admin = path().startsWith("/v1/admin/");
      if (admin) {
        operation.setTags(List.of("admin"));
      }
      // The gate reads every query string, whatever parameters the endpoint takes.
      problem(400, "MALFORMED_PATH", "MALFORMED_REQUEST", "INVALID_QUERY_PARAMETER");
      problem(401, ErrorCode.AUTHENTICATION_REQUIRED.code());
      problem(403, "FORBIDDEN");
      if (!admin) {
        problem(429, "RATE_LIMITED");
        retryAfter.add("429");
      }
      problem(431, "REQUEST_HEADER_TOO_LARGE", "TOO_MANY_HEADERS");
      problem(500, "INTERNAL_ERROR");
      if (has(RequestBody.class)) {
        problem(
            400,
            "VALIDATION_FAILED",
            "UNKNOWN_FIELD",
            "DUPLICATE_FIELD",
            "WRONG_TYPE",
            "INVALID_JSON");
        problem(413, "PAYLOAD_TOO_LARGE");
        problem(415, "UNSUPPORTED_MEDIA_TYPE");
      }
      if (hasTypedPathVariable()) {
        problem(400, "INVALID_PATH_PARAMETER");
      }
      if (hasRequiredQueryParameter()) {
        problem(400, "MISSING_QUERY_PARAMETER");
      }
      if (hasTypedQueryParameter()) {
        problem(400, "INVALID_QUERY_PARAMETER");
      }
      List<String> business = new ArrayList<>();
      for (ProblemAnswer answer :
          AnnotatedElementUtils.findMergedRepeatableAnnotations(
              handler.getMethod(), ProblemAnswer.class)) {
        problem(answer.status(), answer.errorCodes());
        business.add(String.valueOf(answer.status()));
      }
      for (FilterAnswers filter : filters) {
        filter.answers(handler).forEach((status, errorCodes) -> problem(status, errorCodes));
      }
      if (shards != null) {
        onShards(admin, shards.self() != null);
      }
      ApiResponse created = operation.getResponses().get("201");
      // Handlers that answer with a ResponseEntity, and phased operations, set Location on what
      // they create.
      Class<?> answers = handler.getMethod().getReturnType();
      if (created != null
          && (ResponseEntity.class.isAssignableFrom(answers)
              || PhasedOperation.class.isAssignableFrom(answers))) {
        created.addHeaderObject(
            "Location",
            new Header().description("The created resource").schema(new StringSchema()));
      }
      Idempotent idempotent = handler.getMethodAnnotation(Idempotent.class);
      if (idempotent != null) {
        idempotent(idempotent, defaultTtl, mismatchStatus, issuedKeys);
      } else {
        // Content negotiation refuses an Accept without JSON; an idempotent endpoint answers (and
        // replays) its stored bytes whatever the Accept.
        problem(406, "NOT_ACCEPTABLE");
      }
      write();
      if (idempotent != null) {
        replayed(business);
      }
    }

    /**
     * {@code Idempotent-Replayed} on the answers a retry can get from the record: the handler's own
     * (2xx) and the refusals it stored (its {@link ProblemAnswer} statuses, such as a 402 decline
     * or a 404 order not found). Runs after {@link #write()}, which adds those refusals.
     */
    private void replayed(List<String> business) {
      operation
          .getResponses()
          .forEach(
              (status, response) -> {
                if (status.startsWith("2") || business.contains(status)) {
                  response.addHeaderObject(
                      "Idempotent-Replayed",
                      new Header()
                          .description(
                              "true when this is the stored answer of an earlier request with"
                                  + " the same key")
                          .schema(new StringSchema()._enum(List.of("true"))));
                }
              });
    }

    private void idempotent(
        Idempotent idempotent, Duration defaultTtl, int mismatchStatus, IssuedKeys issuedKeys) {
      Duration ttl = idempotent.ttl().isEmpty() ? defaultTtl : Duration.parse(idempotent.ttl());
      String window = window(ttl);
      boolean strict = issuedKeys.isStrict(idempotent.operation());
      operation.addParametersItem(
          new HeaderParameter()
              .name("Idempotency-Key")
              .required(idempotent.required())
              .example("5f0c9a7e-0b1d-4c55-9d2e-8c7a2e1f4b10")
              .schema(
                  new StringSchema()
                      .minLength(1)
                      .maxLength(2 + 2 * 255)
                      .pattern(DocumentedRules.IDEMPOTENCY_KEY))
              .description(
                  (idempotent.required()
                          ? "Required. "
                          : "Optional; without it a retry runs again. ")
                      + "One random key (a UUID) per intended operation, the same on every retry:"
                      + " 1-255 printable ASCII characters, bare or as a quoted structured-field"
                      + " string. Scoped to your tenant and this operation ("
                      + idempotent.operation()
                      + "); remembered for "
                      + window
                      + "."
                      + (strict
                          ? " Only keys issued by POST /v1/idempotency-keys for this operation"
                              + " are accepted."
                          : "")));
      operation.addExtension(
          "x-idempotency",
          ordered(
              "operation", idempotent.operation(),
              "keyRequired", idempotent.required(),
              "window", ttl.toString(),
              "issuedKeysOnly", strict));
      operation.setDescription(
          (operation.getDescription() == null ? "" : operation.getDescription() + "\n\n")
              + "Idempotent (operation "
              + idempotent.operation()
              + "): a retry with the same key and the same request gets the first answer (status,"
              + " body, Location) replayed with Idempotent-Replayed: true, for "
              + window
              + " (expiry window "
              + ttl
              + "); the same key with another request is refused. After the window the key"
              + " starts a new operation.");
      problem(
          400,
          idempotent.required() ? ErrorCode.IDEMPOTENCY_KEY_MISSING.code() : null,
          ErrorCode.IDEMPOTENCY_KEY_INVALID.code(),
          ErrorCode.IDEMPOTENCY_KEY_NOT_ISSUED.code(),
          ErrorCode.REQUEST_NOT_CANONICAL.code());
      problem(
          409,
          ErrorCode.IDEMPOTENCY_REQUEST_IN_PROGRESS.code(),
          idempotent.phased() ? ErrorCode.IDEMPOTENCY_OUTCOME_PENDING.code() : null);
      retryAfter.add("409");
      problem(mismatchStatus, ErrorCode.IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST.code());
      problem(429, ErrorCode.IDEMPOTENCY_QUOTA_EXCEEDED.code());
      retryAfter.add("429");
      problem(410, ErrorCode.IDEMPOTENCY_RECORD_UNREADABLE.code());
      problem(
          500,
          ErrorCode.IDEMPOTENCY_RESPONSE_TOO_LARGE.code(),
          ErrorCode.IDEMPOTENCY_RECORD_UNREADABLE.code());
      problem(
          503,
          ErrorCode.IDEMPOTENCY_STORE_UNAVAILABLE.code(),
          idempotent.phased() ? ErrorCode.OPERATION_INTERRUPTED.code() : null);
      retryAfter.add("503");
    }

    /**
     * The starter's shard binding answers a tenant's request while the tenant moves, and redirects
     * it to its home region; the operator endpoints on one tenant answer 503 while that tenant
     * moves ({@code shards.OperatorShards}); moving a tenant answers its own refusals.
     */
    private void onShards(boolean admin, boolean regions) {
      String path = path();
      boolean onOneTenant =
          path.startsWith("/v1/admin/idempotency/records/{tenant}/")
              || (path.startsWith("/v1/admin/tenants/{tenant}/") && !path.endsWith("/move"));
      if (!admin || onOneTenant) {
        problem(503, ErrorCode.TENANT_MOVING.code());
        retryAfter.add("503");
      }
      if (regions) {
        problem(307, ErrorCode.TENANT_HOMED_ELSEWHERE.code());
        location.add("307");
      }
    }

    private void problem(int status, String... errorCodes) {
      problem(status, Arrays.asList(errorCodes));
    }

    private void problem(int status, List<String> errorCodes) {
      Set<String> set = codes.computeIfAbsent(String.valueOf(status), s -> new LinkedHashSet<>());
      for (String code : errorCodes) {
        if (code != null) {
          set.add(code);
        }
      }
    }

    /** Problem answers after the handler's own, all in status order. */
    private void write() {
      ApiResponses all = operation.getResponses();
      codes.forEach(
          (status, errorCodes) -> {
            ApiResponse response = all.get(status);
            if (response == null) {
              response = new ApiResponse();
              all.addApiResponse(status, response);
            }
            MediaType media = new MediaType().schema(new Schema<>().$ref(PROBLEM));
            int statusCode = Integer.parseInt(status);
            List<String> lines = new ArrayList<>();
            for (String code : errorCodes) {
              String title = ErrorTitles.of(code);
              lines.add("`" + code + "`: " + title);
              media.addExamples(
                  code,
                  new Example()
                      .summary(title)
                      .value(
                          ordered(
                              "type",
                              Problems.type(code).toString(),
                              "status",
                              statusCode,
                              "errorCode",
                              code)));
            }
            response.description(
                "application/problem+json with errorCode: " + String.join("; ", lines) + ".");
            response.content(new Content().addMediaType(PROBLEM_JSON, media));
            if (retryAfter.contains(status)) {
              response.addHeaderObject(
                  "Retry-After",
                  new Header()
                      .description("Seconds to wait before retrying with the same key")
                      .schema(new IntegerSchema().minimum(java.math.BigDecimal.ONE)));
            }
            if (location.contains(status)) {
              response.addHeaderObject(
                  "Location",
                  new Header()
                      .description("The same request's URL in the tenant's home region")
                      .schema(new StringSchema()));
            }
          });
      ApiResponses sorted = new ApiResponses();
      new TreeMap<>(all).forEach(sorted::addApiResponse);
      operation.setResponses(sorted);
    }

    private boolean hasTypedQueryParameter() {
      for (MethodParameter parameter : handler.getMethodParameters()) {
        if (parameter.hasParameterAnnotation(RequestParam.class)
            && parameter.getParameterType() != String.class) {
          return true;
        }
      }
      return false;
    }

    /** A path variable of a type such as UUID, which a value can fail to be (a String cannot). */
    private boolean hasTypedPathVariable() {
      for (MethodParameter parameter : handler.getMethodParameters()) {
        if (parameter.hasParameterAnnotation(PathVariable.class)
            && parameter.getParameterType() != String.class) {
          return true;
        }
      }
      return false;
    }

    private boolean hasRequiredQueryParameter() {
      for (MethodParameter parameter : handler.getMethodParameters()) {
        RequestParam param = parameter.getParameterAnnotation(RequestParam.class);
        if (param != null && param.required()) {
          return true;
        }
      }
      return false;
    }

    private boolean has(Class<? extends java.lang.annotation.Annotation> annotation) {
      for (MethodParameter parameter : handler.getMethodParameters()) {
        if (parameter.hasParameterAnnotation(annotation)) {
          return true;
        }
      }
      return false;
    }

    private String path() {
      RequestMapping mapping =
          AnnotatedElementUtils.findMergedAnnotation(handler.getMethod(), RequestMapping.class);
      return mapping == null || mapping.path().length == 0 ? "" : mapping.path()[0];
    }
  }

  /**
   * Drops regular expressions only Java understands ({@code (?i)}, {@code \p{Cc}}) from the request
   * schemas: OpenAPI patterns are ECMA-262, and a generator or validator that compiles them would
   * fail or, worse, refuse valid values. The service still checks them. Anchors the others, which
   * Bean Validation applies to the whole value and JSON Schema to any part of it.
   */
  public static OpenApiCustomizer portablePatterns() {
    return openApi -> {
      if (openApi.getComponents() == null || openApi.getComponents().getSchemas() == null) {
        return;
      }
      for (Schema<?> schema : openApi.getComponents().getSchemas().values()) {
        if (schema.getProperties() == null) {
          continue;
        }
        for (Schema<?> property : schema.getProperties().values()) {
          String pattern = property.getPattern();
          if (pattern != null && (pattern.contains("(?i)") || pattern.contains("\\p{"))) {
            property.setPattern(null);
          } else if (pattern != null && !(pattern.startsWith("^") && pattern.endsWith("$"))) {
            // Bean Validation matches the whole value; a JSON Schema pattern matches anywhere in
            // it, so unanchored it would pass values the service refuses ("acc 1!" for
            // [A-Za-z0-9_-]+).
            property.setPattern("^(?:" + pattern + ")$");
          }
        }
      }
    };
  }

  /**
   * A map in the order given, so the document is the same text on every start ({@code Map.of}'s
   * order changes from one JVM to the next).
   */
  private static Map<String, Object> ordered(Object... keysAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }

  private static String window(Duration ttl) {
    long hours = ttl.toHours();
    return hours > 0 && ttl.equals(Duration.ofHours(hours)) ? hours + " hours" : ttl.toString();
  }
}
