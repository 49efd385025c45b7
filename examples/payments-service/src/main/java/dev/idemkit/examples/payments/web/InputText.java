package dev.idemkit.examples.payments.web;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.text.Normalizer;
import java.util.Locale;
import java.util.Optional;

/**
 * The one set of rules for text a request brings that the service stores or looks up, whether it
 * comes in a JSON field ({@link Plain} and {@link Reference}, checked through {@code @Valid}), a
 * query parameter ({@link QueryStrings}, in {@link ApiGateFilter}) or the path ({@link
 * RequestPaths}):
 *
 * <ul>
 *   <li><b>Any text</b> has no control character (Unicode {@code Cc}: U+0000–U+001F, U+007F–U+009F;
 *       PostgreSQL cannot store U+0000 at all, and the others are invisible or move the text around
 *       in a log) and no unpaired surrogate (half of a UTF-16 pair, no character at all: {@code
 *       "\ud800"} in JSON), which has no UTF-8 form and so no form in the database.
 *   <li><b>A reference</b> that identifies a business object (a merchant reference, a sku, a
 *       provider's charge id) also has no invisible format character (Unicode {@code Cf}: U+200B,
 *       U+FEFF, …), among them the bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E,
 *       U+200F, U+061C): they make two references that look the same differ, or make one look like
 *       another. The service's own references are compared in one form, {@link #canonicalReference
 *       NFC}, so that {@code café} typed with {@code é} or with {@code e} + U+0301 is the same
 *       reference.
 * </ul>
 *
 * A refusal names the character and where it is: {@code "has U+0000 (a control character) at
 * position 3"}, positions counting characters (code points) from 1.
 */
public final class InputText {

  private InputText() {}

  /**
   * What is wrong with {@code value} as text the service stores or looks up, as a phrase that
   * follows its name ({@code "has U+0000 (a control character) at position 3"}); empty if nothing
   * (or if it is {@code null}).
   */
  public static Optional<String> problem(String value) {
    return find(value, false);
  }

  /** {@link #problem} for a reference: also no invisible format or bidirectional control. */
  public static Optional<String> referenceProblem(String value) {
    return find(value, true);
  }

  /**
   * The one form a reference is compared and stored in: Unicode NFC. A value the reference rules
   * refuse is returned as it is, so that the refusal points at the caller's own characters (NFC
   * could move them); it is never stored.
   */
  public static String canonicalReference(String value) {
    if (value == null || referenceProblem(value).isPresent()) {
      return value;
    }
    return Normalizer.normalize(value, Normalizer.Form.NFC);
  }

  /**
   * A reference given as query parameter {@code parameter}, in its one form for a lookup; a 400
   * {@code INVALID_QUERY_PARAMETER} that names it, the character and its position if the reference
   * rules refuse it (the gate has already refused control characters in any parameter).
   */
  public static String queryReference(String parameter, String value) {
    Optional<String> problem = referenceProblem(value);
    if (problem.isPresent()) {
      throw Errors.badRequest(
          ApiGateFilter.INVALID_QUERY_PARAMETER,
          "Invalid query parameter",
          "Query parameter "
              + parameter
              + " "
              + problem.get()
              + ". A reference has no control, invisible or bidirectional-control characters;"
              + " send it as it was created.");
    }
    return canonicalReference(value);
  }

  private static Optional<String> find(String value, boolean reference) {
    if (value == null) {
      return Optional.empty();
    }
    int position = 0;
    for (int i = 0; i < value.length(); ) {
      int c = value.codePointAt(i);
      position++;
      String kind = kind(c, reference);
      if (kind != null) {
        return Optional.of("has " + codePoint(c) + " (" + kind + ") at position " + position);
      }
      i += Character.charCount(c);
    }
    return Optional.empty();
  }

  /** What {@code c} is, if the rules refuse it; {@code null} if they take it. */
  private static String kind(int c, boolean reference) {
    switch (Character.getType(c)) {
      case Character.CONTROL:
        return "a control character";
      case Character.SURROGATE:
        return "half of a surrogate pair, not a character";
      case Character.FORMAT:
        if (!reference) {
          return null;
        }
        return isBidiControl(c) ? "a bidirectional control" : "an invisible format character";
      default:
        return null;
    }
  }

  /** The characters that change the direction text is shown in. */
  private static boolean isBidiControl(int c) {
    return (c >= 0x202A && c <= 0x202E)
        || (c >= 0x2066 && c <= 0x2069)
        || c == 0x200E
        || c == 0x200F
        || c == 0x061C;
  }

  /** {@code U+0000}, as the Unicode standard writes a code point. */
  static String codePoint(int c) {
    return String.format(Locale.ROOT, "U+%04X", c);
  }

  /**
   * Text the service stores or looks up: no control character, no unpaired surrogate. Reported as a
   * {@code VALIDATION_FAILED} that names the field, the character and its position.
   */
  @Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER})
  @Retention(RetentionPolicy.RUNTIME)
  @Documented
  @Constraint(validatedBy = PlainValidator.class)
  public @interface Plain {
    String message() default "has a character the service does not take";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
  }

  /**
   * A reference that identifies a business object: {@link Plain}, and no invisible format or
   * bidirectional control. Its owner compares it in {@link #canonicalReference its one form}.
   */
  @Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER})
  @Retention(RetentionPolicy.RUNTIME)
  @Documented
  @Constraint(validatedBy = ReferenceValidator.class)
  public @interface Reference {
    String message() default "has a character a reference does not take";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
  }

  /** Validates {@link Plain}. */
  public static final class PlainValidator implements ConstraintValidator<Plain, String> {
    @Override
    public boolean isValid(String value, ConstraintValidatorContext context) {
      return report(problem(value), context);
    }
  }

  /** Validates {@link Reference}. */
  public static final class ReferenceValidator implements ConstraintValidator<Reference, String> {
    @Override
    public boolean isValid(String value, ConstraintValidatorContext context) {
      return report(referenceProblem(value), context);
    }
  }

  /** The problem as the violation's message (it holds no caller text, so no template escapes). */
  private static boolean report(Optional<String> problem, ConstraintValidatorContext context) {
    if (problem.isEmpty()) {
      return true;
    }
    context.disableDefaultConstraintViolation();
    context.buildConstraintViolationWithTemplate(problem.get()).addConstraintViolation();
    return false;
  }
}
