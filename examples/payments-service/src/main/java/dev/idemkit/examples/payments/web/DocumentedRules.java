package dev.idemkit.examples.payments.web;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.links.Link;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springdoc.core.customizers.OpenApiCustomizer;

/**
 * States in the document the rules the service enforces on what a client sends, which springdoc
 * cannot read from the annotations: a request body takes no field the schema does not name ({@code
 * additionalProperties: false}, the service's {@code UNKNOWN_FIELD}); money and channel formats
 * (checked by {@code MoneyChecked} and a case-insensitive pattern springdoc drops); text without
 * control characters ({@link InputText}); the syntax of path parameters (the gate's plain form);
 * and, from each create operation, a link to the operation that reads what it created.
 *
 * <p>{@code ApiDocumentConformanceIT} generates requests from these rules and fails when the
 * service refuses what they allow or accepts what they refuse.
 */
final class DocumentedRules {

  /** Text without C0 or C1 control characters (ECMA-262 and Java read it alike). */
  static final String NO_CONTROL = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";

  /** As {@link #NO_CONTROL}, with at least one character that is not a space. */
  static final String NOT_BLANK_NO_CONTROL =
      "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\u0000-\\u0020\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$";

  /**
   * The characters a reference does not take besides the controls ({@link
   * InputText#referenceProblem}): the invisible and bidirectional format characters (Unicode
   * category Cf) of the Basic Multilingual Plane, listed from this JVM's Unicode tables. (Those
   * beyond it, such as the tag characters, are refused too; an ECMA-262 pattern without the u flag
   * cannot name them.)
   */
  static final String FORMAT_CHARACTERS = formatCharacters();

  /** Reference text, possibly blank (a query filter): no control, invisible or bidi character. */
  static final String REFERENCE_TEXT =
      "^[^\\u0000-\\u001F\\u007F-\\u009F" + FORMAT_CHARACTERS + "]*$";

  /** A reference: not blank, no control character, no invisible or bidirectional one. */
  static final String REFERENCE =
      "^[^\\u0000-\\u001F\\u007F-\\u009F"
          + FORMAT_CHARACTERS
          + "]*[^\\u0000-\\u0020\\u007F-\\u009F"
          + FORMAT_CHARACTERS
          + "][^\\u0000-\\u001F\\u007F-\\u009F"
          + FORMAT_CHARACTERS
          + "]*$";

  /**
   * A decimal string greater than 0 and at most 1000000000, of at most 12 integer and 6 fraction
   * digits ("10.00").
   */
  static final String AMOUNT =
      "^(?=[0-9.]*[1-9])(?:0{0,3}[0-9]{1,9}(?:\\.[0-9]{1,6})?|0{0,2}1000000000(?:\\.0{1,6})?)$";

  /**
   * The named format of a currency code: ISO 4217, with minor units ({@code java.util.Currency}),
   * in any case.
   */
  static final String CURRENCY_FORMAT = "iso-4217";

  /**
   * On an amount: the sibling field whose currency bounds its decimals (EUR 2, JPY 0), a rule
   * across two fields that JSON Schema cannot write as a pattern.
   */
  static final String DECIMALS_OF = "x-decimals-of";

  /** On an order: the most its lines ({@code quantity} times {@code unitPrice}) add up to. */
  static final String MAXIMUM_TOTAL = "x-maximum-total";

  static final String CURRENCY = "^[A-Za-z]{3}$";

  static final String CHANNEL = "^(?:[Ww][Ee][Bb]|[Mm][Oo][Bb][Ii][Ll][Ee]|[Pp][Oo][Ss])$";

  /** A path segment in its plain form: no control character, '/', '\', '%', ';', '.' or '..'. */
  static final String PATH_SEGMENT = "^(?!\\.{1,2}$)[^\\u0000-\\u0020\\u007F/\\\\%;]+$";

  /**
   * The {@code Idempotency-Key} header: 1-255 visible ASCII characters, bare (without {@code "},
   * {@code ,} or {@code ;}) or as a structured-field string in which {@code \"} and {@code \\}
   * stand for one character each.
   */
  static final String IDEMPOTENCY_KEY =
      "^(?:[\\x21\\x23-\\x2B\\x2D-\\x3A\\x3C-\\x7E]{1,255}"
          + "|\"(?:[\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\x22\\x5C]){1,255}\")$";

  private DocumentedRules() {}

  static OpenApiCustomizer customizer() {
    return openApi -> {
      requestBodies(openApi);
      parameters(openApi);
      links(openApi);
    };
  }

  private static void requestBodies(OpenAPI openApi) {
    Map<String, Schema> schemas =
        openApi.getComponents() == null ? null : openApi.getComponents().getSchemas();
    if (schemas == null || openApi.getPaths() == null) {
      return;
    }
    Set<String> names = new LinkedHashSet<>();
    Deque<Schema<?>> todo = new ArrayDeque<>();
    for (PathItem item : openApi.getPaths().values()) {
      for (Operation operation : item.readOperations()) {
        if (operation.getRequestBody() != null && operation.getRequestBody().getContent() != null) {
          operation.getRequestBody().getContent().values().forEach(m -> todo.add(m.getSchema()));
        }
      }
    }
    while (!todo.isEmpty()) {
      Schema<?> schema = todo.pop();
      if (schema == null) {
        continue;
      }
      if (schema.get$ref() != null) {
        String name = schema.get$ref().substring(schema.get$ref().lastIndexOf('/') + 1);
        if (names.add(name) && schemas.get(name) != null) {
          todo.add(schemas.get(name));
        }
        continue;
      }
      if (schema.getItems() != null) {
        todo.add(schema.getItems());
      }
      if (schema.getProperties() != null) {
        schema.setAdditionalProperties(false);
        if (schema.getProperties().containsKey("items")
            && schema.getProperties().containsKey("currency")) {
          schema.addExtension(MAXIMUM_TOTAL, "1000000000");
        }
        schema.getProperties().forEach((field, property) -> property(schema, field, property));
        for (Schema<?> property : schema.getProperties().values()) {
          todo.add(property);
        }
      }
    }
  }

  /** A pattern that is only a choice of words, as portablePatterns anchors it. */
  private static final java.util.regex.Pattern WORDS =
      java.util.regex.Pattern.compile("\\^\\(\\?:([A-Za-z0-9_]+(?:\\|[A-Za-z0-9_]+)*)\\)\\$");

  @SuppressWarnings("unchecked")
  private static void property(Schema<?> owner, String field, Schema<?> property) {
    boolean required = owner.getRequired() != null && owner.getRequired().contains(field);
    switch (field) {
      case "amount", "unitPrice" -> {
        property.setPattern(AMOUNT);
        property.addExtension(DECIMALS_OF, "currency");
        property.setExample("10.00");
        property.setDescription(
            "A decimal string greater than 0 and at most 1000000000, with no more decimals than"
                + " the currency has (EUR 2, JPY 0): \"10.00\".");
      }
      case "currency" -> {
        property.setPattern(CURRENCY);
        property.setFormat(CURRENCY_FORMAT);
        property.setExample("EUR");
        property.setDescription("An ISO 4217 currency code, in any case: EUR, usd.");
      }
      case "channel" -> {
        property.setPattern(CHANNEL);
        property.setExample("mobile");
        property.setDescription("web, mobile or pos, in any case; absent means web.");
      }
      case "items" -> {
        // @NotEmpty, which springdoc does not turn into minItems.
        property.setMinItems(1);
      }
      case "merchantReference", "sku", "externalReference" -> {
        property.setPattern(REFERENCE);
      }
      default -> {
        java.util.regex.Matcher alternatives =
            property.getPattern() == null ? null : WORDS.matcher(property.getPattern());
        if (alternatives != null && alternatives.matches()) {
          // A choice of fixed words, such as APPLIED|NOT_APPLIED, is an enum.
          property.setPattern(null);
          ((Schema<Object>) property)
              .setEnum(List.<Object>of((Object[]) alternatives.group(1).split("\\|")));
          return;
        }
        if (isString(property) && property.getPattern() == null && property.getEnum() == null) {
          boolean notBlank = property.getMinLength() != null && required;
          property.setPattern(notBlank ? NOT_BLANK_NO_CONTROL : NO_CONTROL);
        }
      }
    }
  }

  private static void parameters(OpenAPI openApi) {
    for (PathItem item : openApi.getPaths().values()) {
      for (Operation operation : item.readOperations()) {
        if (operation.getParameters() == null) {
          continue;
        }
        for (Parameter parameter : operation.getParameters()) {
          if (parameter.getSchema() == null || !isString(parameter.getSchema())) {
            continue;
          }
          // springdoc may hand several parameters one schema object: each gets its own here.
          Schema<?> schema = copy(parameter.getSchema());
          parameter.setSchema(schema);
          if ("Idempotency-Key".equals(parameter.getName())) {
            schema.setPattern(IDEMPOTENCY_KEY);
            schema.setMaxLength(2 + 2 * 255);
          } else if ("path".equals(parameter.getIn())
              && schema.getFormat() == null
              && schema.getPattern() == null) {
            schema.setPattern(PATH_SEGMENT);
            limitScopeParts(parameter, schema);
          } else if ("query".equals(parameter.getIn()) && "key".equals(parameter.getName())) {
            schema.setPattern("^[\\x21-\\x7E]{1,255}$");
            schema.setMaxLength(255);
          } else if ("query".equals(parameter.getIn())
              && "merchantReference".equals(parameter.getName())) {
            schema.setPattern(REFERENCE_TEXT);
          } else if ("query".equals(parameter.getIn())
              && schema.getFormat() == null
              && schema.getPattern() == null) {
            schema.setPattern(NO_CONTROL);
          }
        }
      }
    }
  }

  /** The parts of a record's scope: a tenant and an operation of at most 200, a key of 255. */
  private static void limitScopeParts(Parameter parameter, Schema<?> schema) {
    switch (parameter.getName()) {
      case "tenant", "operation" -> schema.setMaxLength(dev.idemkit.Scope.MAX_LENGTH);
      case "key" -> {
        schema.setMaxLength(255);
        schema.setPattern(
            "^(?!\\.{1,2}$)[\\x21-\\x24\\x26-\\x2E\\x30-\\x3A\\x3C-\\x5B\\x5D-\\x7E]+$");
      }
      default -> {}
    }
  }

  /** From each create operation to the operation that reads what it created. */
  private static void links(OpenAPI openApi) {
    link(openApi, "/v1/payments", "getPayment", "paymentId", "Read the payment");
    link(
        openApi,
        "/v1/payments",
        "listLedgerEntries",
        "paymentId",
        "Read the payment's ledger entries");
    link(openApi, "/v1/orders", "getOrder", "orderId", "Read the order");
    link(openApi, "/v1/orders/{orderId}/confirm-payment", "getOrder", "orderId", "Read the order");
    link(
        openApi,
        "/v1/orders/{orderId}/confirm-payment",
        "getShipment",
        "orderId",
        "Read the paid order's shipment");
  }

  private static void link(
      OpenAPI openApi, String path, String target, String id, String description) {
    PathItem item = openApi.getPaths().get(path);
    if (item == null || item.getPost() == null || item.getPost().getResponses() == null) {
      return;
    }
    item.getPost()
        .getResponses()
        .forEach(
            (status, response) -> {
              if (status.startsWith("2")) {
                addLink(response, target, id, description);
              }
            });
  }

  private static void addLink(ApiResponse response, String target, String id, String description) {
    response.link(
        target,
        new Link()
            .operationId(target)
            .parameters(id, "$response.body#/" + id)
            .description(description));
  }

  private static String formatCharacters() {
    StringBuilder ranges = new StringBuilder();
    int c = 0;
    while (c <= 0xFFFF) {
      if (Character.getType(c) != Character.FORMAT) {
        c++;
        continue;
      }
      int end = c;
      while (end + 1 <= 0xFFFF && Character.getType(end + 1) == Character.FORMAT) {
        end++;
      }
      ranges.append(String.format(java.util.Locale.ROOT, "\\u%04X", c));
      if (end > c) {
        ranges.append(String.format(java.util.Locale.ROOT, "-\\u%04X", end));
      }
      c = end + 1;
    }
    return ranges.toString();
  }

  private static Schema<?> copy(Schema<?> schema) {
    StringSchema copy = new StringSchema();
    copy.setFormat(schema.getFormat());
    copy.setPattern(schema.getPattern());
    copy.setMinLength(schema.getMinLength());
    copy.setMaxLength(schema.getMaxLength());
    copy.setDescription(schema.getDescription());
    copy.setExample(schema.getExample());
    copy.setDefault(schema.getDefault());
    if (schema.getEnum() != null) {
      copy.setEnum(schema.getEnum().stream().map(String::valueOf).toList());
    }
    return copy;
  }

  private static boolean isString(Schema<?> schema) {
    return "string".equals(schema.getType())
        || (schema.getTypes() != null && schema.getTypes().contains("string"));
  }
}
