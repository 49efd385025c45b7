package dev.idemkit.examples.payments.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import jakarta.validation.constraints.Pattern;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The rules for text the service stores or looks up, in each place a request carries it. */
class InputTextTest {

  static Stream<Arguments> controls() {
    return Stream.of(
        arguments("ab\u0000", "has U+0000 (a control character) at position 3"),
        arguments("\tx", "has U+0009 (a control character) at position 1"),
        arguments("a\u007f", "has U+007F (a control character) at position 2"),
        arguments("a\u0085", "has U+0085 (a control character) at position 2"),
        arguments(
            "x\ud800", "has U+D800 (half of a surrogate pair, not a character) at position 2"),
        arguments("\ud83d\ude00\u0000", "has U+0000 (a control character) at position 2"));
  }

  @ParameterizedTest
  @MethodSource("controls")
  void anyTextRefusesControlsAndLoneSurrogates(String value, String problem) {
    assertThat(InputText.problem(value)).hasValue(problem);
    assertThat(InputText.referenceProblem(value)).hasValue(problem);
  }

  static Stream<Arguments> invisibles() {
    return Stream.of(
        arguments(
            "café-order-77\u200b", "has U+200B (an invisible format character) at position 14"),
        arguments("\ufeffref", "has U+FEFF (an invisible format character) at position 1"),
        arguments("ab\u202ecd", "has U+202E (a bidirectional control) at position 3"),
        arguments("\u200eab", "has U+200E (a bidirectional control) at position 1"),
        arguments("a\u2067b", "has U+2067 (a bidirectional control) at position 2"),
        arguments("a\u061cb", "has U+061C (a bidirectional control) at position 2"));
  }

  @ParameterizedTest
  @MethodSource("invisibles")
  void aReferenceAlsoRefusesInvisibleAndBidiCharacters(String value, String problem) {
    assertThat(InputText.referenceProblem(value)).hasValue(problem);
    assertThat(InputText.problem(value)).as("any other text may hold them").isEmpty();
  }

  @Test
  void aReferenceIsComparedInNfcAndARefusedOneIsLeftAsSent() {
    String nfc = "caf\u00e9-order-77";
    String nfd = "cafe\u0301-order-77";
    assertThat(InputText.canonicalReference(nfd)).isEqualTo(nfc);
    assertThat(InputText.canonicalReference(nfc)).isEqualTo(nfc);
    // Positions then point at the caller's own characters.
    assertThat(InputText.canonicalReference(nfd + "\u200b")).isEqualTo(nfd + "\u200b");
    assertThat(InputText.referenceProblem(nfd + "\u200b"))
        .hasValue("has U+200B (an invisible format character) at position 15");
    assertThat(InputText.canonicalReference(null)).isNull();
    assertThat(InputText.problem("café-order-77 · 東京 😀")).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "NUL | merchantReference=%00 | Query parameter merchantReference has U+0000 (a control"
            + " character) at position 1.",
        "invalid byte | merchantReference=a%ff | Query parameter merchantReference has %FF at"
            + " position 2, which is not UTF-8",
        "overlong NUL | merchantReference=%C0%80 | Query parameter merchantReference has %C0%80 at"
            + " position 1, which is not UTF-8",
        "truncated sequence | merchantReference=%E2%82 | Query parameter merchantReference has"
            + " %E2%82 at position 1, which is not UTF-8",
        "C1 control | x=1&accountId=a%C2%85 | Query parameter accountId has U+0085 (a control"
            + " character) at position 2.",
        "malformed escape | merchantReference=%zz | Query parameter merchantReference has a '%'"
            + " that is not followed by two hexadecimal digits",
        "bad name | a%00b=1 | The name of query parameter a%00b has U+0000 (a control character)"
            + " at position 2.",
      })
  void aQueryStringIsPercentEncodedUtf8Text(String name, String query, String problem) {
    assertThat(QueryStrings.problem(query))
        .hasValueSatisfying(p -> assertThat(p).startsWith(problem));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "merchantReference=caf%C3%A9-order-77",
        "merchantReference=a+b&accountId=acc_1",
        "key=%22q%22&&flag",
        "merchantReference=x%E2%80%8B",
        ""
      })
  void aQueryOfTextPasses(String query) {
    // An invisible character is a reference's matter: the endpoint that takes one refuses it.
    assertThat(QueryStrings.problem(query)).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "/v1/accounts/a%00/balance | The path has %00, U+0000 (a control character), at position"
            + " 15.",
        "/v1/accounts/a%C2%85/balance | The decoded path has U+0085 (a control character) at"
            + " position 15.",
        "/v1/accounts/a%ff/balance | The path's percent-encoded bytes are not UTF-8",
        "/v1//payments | The path has an empty segment at position 5.",
        "/v1/%61dmin | The path percent-encodes 'a' as %61 at position 5.",
      })
  void aRefusedPathSaysWhy(String path, String problem) {
    assertThat(RequestPaths.canonical(path)).isEmpty();
    assertThat(RequestPaths.problem(path))
        .hasValueSatisfying(p -> assertThat(p).startsWith(problem));
  }

  /**
   * Every string field of every request body has a rule for its characters: {@link
   * InputText.Plain}, {@link InputText.Reference}, or a {@link Pattern} of what it may be (the
   * money fields are read as numbers and currency codes by {@link MoneyChecked}, never stored as
   * sent). A new field without one fails here, before it can store a NUL.
   */
  @Test
  void everyStringOfEveryRequestBodyHasARuleForItsCharacters() throws Exception {
    ClassPathScanningCandidateComponentProvider scanner =
        new ClassPathScanningCandidateComponentProvider(false);
    scanner.addIncludeFilter(new AnnotationTypeFilter(RestController.class));
    Set<Class<?>> bodies = new HashSet<>();
    for (BeanDefinition controller :
        scanner.findCandidateComponents("dev.idemkit.examples.payments")) {
      for (Method method : Class.forName(controller.getBeanClassName()).getDeclaredMethods()) {
        for (int i = 0; i < method.getParameterCount(); i++) {
          if (method.getParameters()[i].isAnnotationPresent(RequestBody.class)) {
            bodies.add(method.getParameterTypes()[i]);
          }
        }
      }
    }
    assertThat(bodies).as("request bodies found").hasSizeGreaterThanOrEqualTo(4);
    List<String> unruled = new ArrayList<>();
    Set<Class<?>> seen = new HashSet<>();
    for (Class<?> body : bodies) {
      collectUnruled(body, seen, unruled);
    }
    assertThat(unruled).as("string fields with no rule for their characters").isEmpty();
  }

  /** Read as amounts and currency codes by the commands' {@link MoneyChecked} checks. */
  private static final Set<String> MONEY_FIELDS = Set.of("amount", "currency", "unitPrice");

  private static void collectUnruled(Class<?> type, Set<Class<?>> seen, List<String> unruled) {
    if (!type.isRecord() || !seen.add(type)) {
      return;
    }
    for (RecordComponent component : type.getRecordComponents()) {
      Class<?> nested = elementType(component.getGenericType());
      if (component.getType() == String.class) {
        boolean ruled =
            field(component).isAnnotationPresent(InputText.Plain.class)
                || field(component).isAnnotationPresent(InputText.Reference.class)
                || field(component).isAnnotationPresent(Pattern.class)
                || MONEY_FIELDS.contains(component.getName());
        if (!ruled) {
          unruled.add(type.getSimpleName() + "." + component.getName());
        }
      } else if (nested != null) {
        collectUnruled(nested, seen, unruled);
      } else {
        collectUnruled(component.getType(), seen, unruled);
      }
    }
  }

  private static java.lang.reflect.Field field(RecordComponent component) {
    try {
      return component.getDeclaringRecord().getDeclaredField(component.getName());
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The element type of a {@code List<Item>}, or null. */
  private static Class<?> elementType(Type type) {
    if (type instanceof ParameterizedType p
        && p.getActualTypeArguments().length == 1
        && p.getActualTypeArguments()[0] instanceof Class<?> element) {
      return element;
    }
    return null;
  }
}
