package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.examples.payments.demo.EmbeddedMail;
import dev.idemkit.examples.payments.demo.EmbeddedProvider;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The curl lines of the README's tour and of the pages it leads to ({@link #PAGES}), run as written
 * (host and port aside, and the values their {@code P=…} and {@code O=…} lines ask the reader to
 * fill in): the README's payment created, replayed, refused on a changed amount and read back; a
 * payment refused without a key, another whose answer is lost and recovered; two payments whose
 * outcome stays unknown escalated to an operator and resolved, one applied and one not applied (on
 * a service started with the {@code --idemkit.*} arguments of the demo start line in that section);
 * an order created and paid; then what the consumers made of them: the ledger entries, the balance,
 * the receipt, the mail, the shipment and the outbox backlog.
 */
class ReadmeCurlIT extends HttpTestSupport {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final Pattern VARIABLE = Pattern.compile("\\$([A-Z]+)");
  private static final Pattern ASSIGNMENT = Pattern.compile("([A-Z]+)=\\S+(\\s+#.*)?");

  /** The README and the pages whose curl lines this test runs, relative to this module. */
  private static final List<String> PAGES =
      List.of("../../README.md", "../../docs/payments-service.md", "../../docs/operations.md");

  /**
   * The section (in docs/operations.md) whose demo runs on a service started with its own
   * arguments.
   */
  private static final String RECORD_LIFE = "Cleanup, recovery and the record's life";

  @Autowired EmbeddedMail mail;
  @Autowired EmbeddedProvider provider;

  /** The {@code --idemkit.…} arguments of the demo start line in {@link #RECORD_LIFE}. */
  @DynamicPropertySource
  static void demoStartArguments(DynamicPropertyRegistry registry) throws Exception {
    List<Start> starts =
        readme().starts().stream().filter(s -> s.section().equals(RECORD_LIFE)).toList();
    assertThat(starts).as("one start line in %s", RECORD_LIFE).hasSize(1);
    List<String> arguments = starts.get(0).arguments();
    assertThat(arguments).isNotEmpty().allMatch(a -> a.startsWith("--idemkit.") && a.contains("="));
    for (String argument : arguments) {
      String[] setting = argument.substring(2).split("=", 2);
      registry.add(setting[0], () -> setting[1]);
    }
  }

  /** One curl command of the {@link #PAGES}, under the heading of its section. */
  private record Curl(
      String section, String method, String url, Map<String, String> headers, String body) {

    /** Method and URL as the README writes them, e.g. {@code GET localhost:8080/v1/…}. */
    String line() {
      return method + " " + url;
    }
  }

  /**
   * A {@code java -jar} line of the {@link #PAGES}: its section and its arguments after the jar.
   */
  private record Start(String section, List<String> arguments) {}

  /**
   * Every curl command in the {@code sh} blocks of the {@link #PAGES}, every variable they assign,
   * and every start line.
   */
  private record Readme(List<Curl> curls, List<String> assigned, List<Start> starts) {

    List<Curl> in(String section) {
      return curls.stream().filter(c -> c.section().equals(section)).toList();
    }
  }

  private static Readme readme() throws Exception {
    List<Curl> curls = new ArrayList<>();
    List<String> assigned = new ArrayList<>();
    List<Start> starts = new ArrayList<>();
    for (String page : PAGES) {
      read(Files.readString(Path.of(page)), curls, assigned, starts);
    }
    return new Readme(curls, assigned, starts);
  }

  private static void read(
      String page, List<Curl> curls, List<String> assigned, List<Start> starts) {
    String section = "";
    boolean inShell = false;
    boolean inCode = false;
    StringBuilder block = new StringBuilder();
    for (String line : page.split("\n")) {
      if (line.startsWith("```")) {
        if (inShell) {
          for (String command : block.toString().replace("\\\n", " ").split("\n")) {
            Matcher assignment = ASSIGNMENT.matcher(command.strip());
            if (assignment.matches()) {
              assigned.add(assignment.group(1));
            } else if (command.startsWith("curl ")) {
              curls.add(parse(section, command));
            } else if (command.startsWith("java -jar ")) {
              List<String> words = words(command);
              starts.add(new Start(section, words.subList(3, words.size())));
            }
          }
          block.setLength(0);
        }
        inShell = !inCode && line.equals("```sh");
        inCode = !inCode;
      } else if (inShell) {
        block.append(line).append('\n');
      } else if (!inCode && line.startsWith("#")) {
        section = line.replaceFirst("^#+\\s*", "");
      }
    }
  }

  /** A command's words as the shell splits them: quotes removed, a comment dropped. */
  private static List<String> words(String command) {
    List<String> words = new ArrayList<>();
    StringBuilder word = null;
    char quote = 0;
    for (char c : command.toCharArray()) {
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          word.append(c);
        }
      } else if (Character.isWhitespace(c)) {
        if (word != null) {
          words.add(word.toString());
          word = null;
        }
      } else if (c == '#' && word == null) {
        break;
      } else {
        word = word == null ? new StringBuilder() : word;
        if (c == '\'' || c == '"') {
          quote = c;
        } else {
          word.append(c);
        }
      }
    }
    assertThat(quote).as("quotes closed in: %s", command).isEqualTo('\0');
    if (word != null) {
      words.add(word.toString());
    }
    return words;
  }

  private static Curl parse(String section, String command) {
    List<String> words = words(command);
    String method = null;
    String url = null;
    String body = null;
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < words.size(); i++) {
      switch (words.get(i)) {
        case "-i", "-s" -> {}
        case "-X" -> method = words.get(++i);
        case "-H" -> {
          String[] header = words.get(++i).split(":\\s*", 2);
          headers.put(header[0], header[1]);
        }
        case "-d" -> body = words.get(++i);
        case "-o" -> i++;
        default -> {
          assertThat(words.get(i))
              .as("an option this test knows, in: %s", command)
              .doesNotStartWith("-");
          assertThat(url).as("one URL in: %s", command).isNull();
          url = words.get(i);
        }
      }
    }
    // As curl does: -d without -X is a POST.
    method = method != null ? method : body != null ? "POST" : "GET";
    return new Curl(section, method, url, headers, body);
  }

  /** The command as an HTTP request to this test's service (and mail simulator). */
  private HttpRequest request(Curl curl, Map<String, String> values) {
    String url =
        fill(curl.url(), values)
            .replace("localhost:8080", "localhost:" + port)
            .replace("localhost:8082", URI.create(mail.baseUrl()).getAuthority());
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://" + url)).timeout(Duration.ofSeconds(30));
    curl.headers().forEach((name, value) -> b.header(name, fill(value, values)));
    return b.method(
            curl.method(),
            curl.body() == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(fill(curl.body(), values)))
        .build();
  }

  private static String fill(String text, Map<String, String> values) {
    return VARIABLE
        .matcher(text)
        .replaceAll(
            v -> {
              assertThat(values).as("a value for $%s", v.group(1)).containsKey(v.group(1));
              return Matcher.quoteReplacement(values.get(v.group(1)));
            });
  }

  /**
   * Sends {@code request} until its answer is {@code done}: what the consumers do happens after the
   * request that caused it answered, within moments; a minute is the bound.
   */
  private static HttpResponse<String> awaitAnswer(
      String what, HttpRequest request, Predicate<HttpResponse<String>> done)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    HttpResponse<String> answer = send(request);
    while (!done.test(answer)) {
      assertThat(System.nanoTime())
          .as("%s; the last answer: %d %s", what, answer.statusCode(), answer.body())
          .isLessThan(deadline);
      Thread.sleep(50);
      answer = send(request);
    }
    return answer;
  }

  private static JsonNode json(HttpResponse<String> answer) {
    return JSON.readTree(answer.body());
  }

  private static boolean ok(HttpResponse<String> answer, Predicate<JsonNode> body) {
    return answer.statusCode() == 200 && body.test(json(answer));
  }

  @Test
  void theReadmeWalkThroughDoesWhatTheReadmeSays() throws Exception {
    // A fresh database per test JVM: the README's keys and references are unused here.
    Readme readme = readme();
    List<Curl> tryIt = readme.in("Try it with curl");
    List<Curl> noKeyTour = readme.in("A request without a key");
    List<Curl> lostAnswer = readme.in("Watch a lost answer being survived");
    assertThat(tryIt)
        .extracting(Curl::line)
        .containsExactly(
            "POST localhost:8080/v1/payments",
            "POST localhost:8080/v1/payments",
            "POST localhost:8080/v1/payments",
            "GET localhost:8080/v1/payments?merchantReference=order-1001");
    assertThat(tryIt.subList(0, 3))
        .extracting(c -> c.headers().get("Idempotency-Key"))
        .containsOnly(tryIt.get(0).headers().get("Idempotency-Key"));
    assertThat(tryIt.get(1).body()).isNotEqualTo(tryIt.get(0).body());
    assertThat(noKeyTour).extracting(Curl::line).containsExactly("POST localhost:8080/v1/payments");
    assertThat(noKeyTour.get(0).headers()).doesNotContainKey("Idempotency-Key");
    assertThat(lostAnswer.get(0).line()).isEqualTo("POST localhost:8080/v1/payments");
    Map<String, String> values = new LinkedHashMap<>();

    HttpResponse<String> created = send(request(tryIt.get(0), values));
    HttpResponse<String> replayed = send(request(tryIt.get(1), values));
    HttpResponse<String> changed = send(request(tryIt.get(2), values));
    HttpResponse<String> readBack = send(request(tryIt.get(3), values));
    HttpResponse<String> noKey = send(request(noKeyTour.get(0), values));

    assertThat(created.statusCode()).isEqualTo(201);
    assertThat(created.headers().firstValue("Location")).isPresent();
    assertThat(replayed.statusCode()).isEqualTo(201);
    assertThat(replayed.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(replayed.body()).isEqualTo(created.body());
    assertThat(changed.statusCode()).isEqualTo(422);
    assertThat(changed.body()).contains("IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_REQUEST");
    assertThat(readBack.statusCode()).as(readBack.body()).isEqualTo(200);
    assertThat(json(readBack)).hasSize(1);
    assertThat(json(readBack).get(0).get("paymentId").asString())
        .isEqualTo(json(created).get("paymentId").asString());
    assertThat(json(readBack).get(0).get("status").asString()).isEqualTo("COMPLETED");
    assertThat(json(readBack).get(0).get("amount").asString()).isEqualTo("10.00");
    assertThat(noKey.statusCode()).isEqualTo(400);
    assertThat(noKey.body()).contains("IDEMPOTENCY_KEY_MISSING");
    assertThat(paymentsFor("order-1001")).isEqualTo(1);
    assertThat(paymentsFor("order-1002")).isZero();

    HttpResponse<String> lost = send(request(lostAnswer.get(0), values));
    HttpResponse<String> again = send(request(lostAnswer.get(0), values));
    assertThat(lost.statusCode()).isEqualTo(409);
    assertThat(lost.body()).contains("IDEMPOTENCY_OUTCOME_PENDING");
    assertThat(lost.headers().firstValue("Retry-After")).isPresent();
    assertThat(again.statusCode()).as(again.body()).isEqualTo(201);
    assertThat(again.body())
        .contains("\"status\":\"COMPLETED\"")
        .contains("\"providerChargeId\":\"ch_");
    assertThat(paymentsFor("order-2001")).isEqualTo(1);

    theOperatorSectionDoesWhatItSays(readme.in(RECORD_LIFE), values);

    // After a payment (docs/payments-service.md): an order created and paid, then what the
    // consumers made of it all.
    List<Curl> events = readme.in("After a payment: events across boundaries");
    assertThat(events)
        .extracting(Curl::line)
        .containsExactly(
            "POST localhost:8080/v1/orders",
            "POST localhost:8080/v1/orders/$O/confirm-payment",
            "GET localhost:8080/v1/payments/$P/ledger-entries",
            "GET localhost:8080/v1/accounts/acc_1/balance",
            "GET localhost:8080/v1/receipts?paymentId=$P",
            "GET localhost:8082/messages?key=receipt_payment_$P",
            "GET localhost:8080/v1/orders/$O/shipment",
            "GET localhost:8080/v1/admin/events/outbox");
    assertThat(readme.assigned()).containsExactly("O", "P");

    HttpResponse<String> order = send(request(events.get(0), values));
    assertThat(order.statusCode()).as(order.body()).isEqualTo(201);
    assertThat(json(order).get("status").asString()).isEqualTo("PENDING_PAYMENT");
    assertThat(json(order).get("total").asString()).isEqualTo("25.00");
    values.put("O", json(order).get("orderId").asString());
    values.put("P", json(created).get("paymentId").asString());
    String paymentId = values.get("P");

    // Not paid yet: no shipment.
    HttpResponse<String> noShipment = send(request(events.get(6), values));
    assertThat(noShipment.statusCode()).isEqualTo(404);
    assertThat(noShipment.body()).contains("SHIPMENT_NOT_FOUND");

    HttpResponse<String> paid = send(request(events.get(1), values));
    assertThat(paid.statusCode()).as(paid.body()).isEqualTo(200);
    assertThat(json(paid).get("status").asString()).isEqualTo("PAID");

    JsonNode entries =
        json(awaitAnswer(
                "the ledger books the payment",
                request(events.get(2), values),
                a -> ok(a, j -> j.get("entries").size() == 2)))
            .get("entries");
    assertThat(entries.findValuesAsString("direction")).containsExactly("DEBIT", "CREDIT");
    assertThat(entries.findValuesAsString("entryType"))
        .containsExactly("PAYMENT_DEBIT", "PAYMENT_CREDIT");
    assertThat(entries.findValuesAsString("accountId"))
        .containsExactly("acc_1", "merchant:tenant_demo_a");
    assertThat(entries.findValuesAsString("amount")).containsExactly("10.00", "10.00");
    assertThat(entries.findValuesAsString("currency")).containsExactly("EUR", "EUR");

    // Both walk-through payments (10.00 and 25.00 EUR) are debited from acc_1; other tests of this
    // JVM may have paid from acc_1 too (in EUR, or in other currencies, each a balance of its
    // own), so at least that much in the EUR balance.
    JsonNode balance =
        eurBalance(
            json(
                awaitAnswer(
                    "the ledger books both walk-through payments",
                    request(events.get(3), values),
                    a ->
                        ok(
                            a,
                            j -> {
                              JsonNode eur = eurBalance(j);
                              return eur != null
                                  && new BigDecimal(eur.get("debits").asString())
                                          .compareTo(new BigDecimal("35.00"))
                                      >= 0;
                            }))));
    assertThat(balance).isNotNull();
    assertThat(balance.get("credits").asString()).isEqualTo("0.00");
    assertThat(new BigDecimal(balance.get("balance").asString()))
        .isEqualTo(new BigDecimal(balance.get("debits").asString()).negate());

    JsonNode receipts =
        json(awaitAnswer(
                "the receipt is mailed",
                request(events.get(4), values),
                a ->
                    ok(
                        a,
                        j ->
                            j.get("receipts").size() == 1
                                && j.get("receipts")
                                    .get(0)
                                    .get("status")
                                    .asString()
                                    .equals("SENT"))))
            .get("receipts");
    assertThat(receipts.get(0).get("paymentId").asString()).isEqualTo(paymentId);
    assertThat(receipts.get(0).get("deliveryKey").asString())
        .isEqualTo("receipt_payment_" + paymentId);
    assertThat(receipts.get(0).get("sentAt").isString()).isTrue();

    HttpResponse<String> mailed = send(request(events.get(5), values));
    assertThat(mailed.statusCode()).isEqualTo(200);
    assertThat(mailed.body()).isEqualTo("{\"delivered\":1,\"requests\":1}");

    HttpResponse<String> shipment =
        awaitAnswer(
            "the paid order is shipped",
            request(events.get(6), values),
            a -> a.statusCode() == 200);
    assertThat(json(shipment).get("orderId").asString()).isEqualTo(values.get("O"));
    assertThat(json(shipment).get("status").asString()).isEqualTo("REQUESTED");

    HttpResponse<String> backlog = send(request(events.get(7), values));
    assertThat(backlog.statusCode()).as(backlog.body()).isEqualTo(200);
    assertThat(json(backlog).get("unsent").isNumber()).isTrue();
    assertThat(json(backlog).get("parkedEvents").isNumber()).isTrue();
  }

  /**
   * The record's life: two payments left unknown are escalated, resolved by an operator (applied
   * with a charge id, and not applied), finished by the recovery worker, charged once each.
   */
  private void theOperatorSectionDoesWhatItSays(List<Curl> life, Map<String, String> values)
      throws Exception {
    String resolution =
        "POST localhost:8080/v1/admin/idempotency/records/tenant_demo_a/create_payment/";
    assertThat(life)
        .extracting(Curl::line)
        .containsExactly(
            "POST localhost:8080/v1/payments",
            "POST localhost:8080/v1/payments",
            "GET localhost:8080/v1/admin/idempotency/recovery",
            resolution + "0b6c3f55-demo-escalate-0001/resolution",
            resolution + "0b6c3f55-demo-escalate-0002/resolution");
    String appliedKey = life.get(0).headers().get("Idempotency-Key");
    String notAppliedKey = life.get(1).headers().get("Idempotency-Key");

    for (Curl pay : life.subList(0, 2)) {
      HttpResponse<String> pending = send(request(pay, values));
      assertThat(pending.statusCode()).as(pending.body()).isEqualTo(409);
      assertThat(pending.body()).contains("IDEMPOTENCY_OUTCOME_PENDING");
    }
    awaitAnswer(
        "both payments escalated to an operator",
        request(life.get(2), values),
        a -> ok(a, j -> escalatedKeys(j).containsAll(List.of(appliedKey, notAppliedKey))));
    assertThat(state(appliedKey)).isEqualTo("UNKNOWN_REQUIRES_RECOVERY");

    Curl asTenant =
        new Curl(
            life.get(3).section(),
            life.get(3).method(),
            life.get(3).url(),
            new LinkedHashMap<>(life.get(3).headers()),
            life.get(3).body());
    asTenant.headers().put("Authorization", "Bearer " + TENANT_A);
    assertThat(send(request(asTenant, values)).statusCode()).as("tenant keys").isEqualTo(403);

    HttpResponse<String> applied = send(request(life.get(3), values));
    assertThat(applied.statusCode()).as(applied.body()).isEqualTo(200);
    assertResolvedBy(
        json(applied), "OPERATOR_RESOLVED_APPLIED", "charge seen in the provider dashboard");
    HttpResponse<String> notApplied = send(request(life.get(4), values));
    assertThat(notApplied.statusCode()).as(notApplied.body()).isEqualTo(200);
    assertResolvedBy(
        json(notApplied), "OPERATOR_RESOLVED_NOT_APPLIED", "no charge at the provider");

    // The worker finishes both; then the payment commands, sent again, answer as completed.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!state(appliedKey).equals("COMPLETED") || !state(notAppliedKey).equals("COMPLETED")) {
      assertThat(System.nanoTime()).as("the worker finishes both").isLessThan(deadline);
      Thread.sleep(50);
    }
    HttpResponse<String> first = send(request(life.get(0), values));
    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    assertThat(json(first).get("status").asString()).isEqualTo("COMPLETED");
    assertThat(json(first).get("providerChargeId").asString()).isEqualTo("ch_123");
    HttpResponse<String> second = send(request(life.get(1), values));
    assertThat(second.statusCode()).as(second.body()).isEqualTo(201);
    assertThat(json(second).get("status").asString()).isEqualTo("COMPLETED");
    assertThat(json(second).get("providerChargeId").asString())
        .startsWith("ch_")
        .isNotEqualTo("ch_123");
    for (HttpResponse<String> paid : List.of(first, second)) {
      String charges =
          send(HttpRequest.newBuilder(
                      URI.create(
                          provider.baseUrl()
                              + "/charges?reference="
                              + json(paid).get("paymentId").asString()))
                  .build())
              .body();
      assertThat(charges).as("charged once").contains("\"succeeded\":1");
    }
    assertThat(paymentsFor("order-3001")).isEqualTo(1);
    assertThat(paymentsFor("order-3002")).isEqualTo(1);

    HttpResponse<String> again = send(request(life.get(3), values));
    assertThat(again.statusCode()).as(again.body()).isEqualTo(409);
    assertThat(again.body()).contains("RECORD_NOT_AWAITING_RESOLUTION");
  }

  private static List<String> escalatedKeys(JsonNode recovery) {
    return StreamSupport.stream(recovery.get("escalated").spliterator(), false)
        .map(r -> r.get("key").asString())
        .toList();
  }

  private static void assertResolvedBy(JsonNode record, String event, String reason) {
    // The worker may already have taken the record over: its rows would follow the operator's.
    List<JsonNode> rows =
        StreamSupport.stream(record.get("history").spliterator(), false)
            .filter(h -> h.get("event").asString().equals(event))
            .toList();
    assertThat(rows).as("one %s row in %s", event, record).hasSize(1);
    assertThat(rows.get(0).get("actor").asString()).isEqualTo("admin:demo_operator");
    assertThat(rows.get(0).get("reason").asString()).isEqualTo(reason);
  }

  private String state(String key) {
    return jdbc.sql("select state from idemkit_record where idem_key = ?")
        .param(key)
        .query(String.class)
        .single();
  }

  /** The EUR entry of an account's balances answer, or null when it has none. */
  private static JsonNode eurBalance(JsonNode answer) {
    for (JsonNode b : answer.get("balances")) {
      if (b.get("currency").asString().equals("EUR")) {
        return b;
      }
    }
    return null;
  }
}
