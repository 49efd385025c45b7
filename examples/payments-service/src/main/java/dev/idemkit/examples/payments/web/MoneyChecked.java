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
import java.util.List;

/**
 * A command whose amounts depend on its currency (the scale of {@code 10.001} depends on whether it
 * is EUR or JPY), so no single field's annotation can check them. The command says what is wrong,
 * field by field, in the caller's terms ({@code amount}, {@code items[0].unitPrice}); {@link
 * ValidMoney} reports each as one message that starts with the JSON field's name, never as a
 * synthetic property such as {@code amountValid}.
 */
public interface MoneyChecked {

  /** What is wrong with the command's money fields; empty if nothing. */
  List<FieldProblem> moneyProblems();

  /**
   * One field's problem.
   *
   * @param field the field as the caller wrote it: {@code amount}, {@code items[1].unitPrice}
   * @param message what is wrong, e.g. {@code "has 3 decimals; EUR allows 2"}
   */
  record FieldProblem(String field, String message) {}

  /** Validates a {@link MoneyChecked} command through {@code @Valid}. */
  @Target(ElementType.TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @Documented
  @Constraint(validatedBy = Validator.class)
  @interface ValidMoney {
    String message() default "has an invalid amount";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
  }

  /** Turns each {@link FieldProblem} into a violation of its field. */
  final class Validator implements ConstraintValidator<ValidMoney, MoneyChecked> {
    @Override
    public boolean isValid(MoneyChecked command, ConstraintValidatorContext context) {
      if (command == null) {
        return true;
      }
      List<FieldProblem> problems = command.moneyProblems();
      if (problems.isEmpty()) {
        return true;
      }
      context.disableDefaultConstraintViolation();
      for (FieldProblem problem : problems) {
        context
            .buildConstraintViolationWithTemplate(escape(problem.field() + " " + problem.message()))
            .addConstraintViolation();
      }
      return false;
    }

    /** Messages are templates: a caller's value must not be read as an expression. */
    private static String escape(String message) {
      return message
          .replace("\\", "\\\\")
          .replace("{", "\\{")
          .replace("}", "\\}")
          .replace("$", "\\$");
    }
  }
}
