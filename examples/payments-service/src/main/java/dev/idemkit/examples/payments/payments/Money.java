package dev.idemkit.examples.payments.payments;

import java.math.BigDecimal;
import java.util.Currency;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Amounts as the API treats them: a decimal string, positive, with no more decimals than the
 * currency has ({@code 10}, {@code 10.0} and {@code 10.00} EUR are one amount; {@code 10.001} EUR
 * is invalid), normalized to the currency's scale.
 */
public final class Money {

  /** The largest amount accepted. */
  public static final BigDecimal MAX = new BigDecimal("1000000000");

  private static final Pattern DECIMAL = Pattern.compile("[0-9]{1,12}(\\.[0-9]{1,6})?");

  private static final Pattern SIGNED_DECIMAL = Pattern.compile("-[0-9]{1,12}(\\.[0-9]{1,6})?");

  private static final Pattern CURRENCY_CODE = Pattern.compile("[A-Za-z]{3}");

  private Money() {}

  /** The ISO 4217 currency, upper case, or {@code null} if unknown. */
  public static Currency currency(String code) {
    if (code == null || !CURRENCY_CODE.matcher(code).matches()) {
      return null;
    }
    try {
      Currency c = Currency.getInstance(code.toUpperCase(Locale.ROOT));
      return c.getDefaultFractionDigits() < 0 ? null : c;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * Why {@code code} is not a currency the API accepts, in the caller's terms, or {@code null} if
   * it is one.
   */
  public static String currencyProblem(String code) {
    return currency(code) == null
        ? "is not an ISO 4217 currency code; send one such as EUR, USD or JPY"
        : null;
  }

  /**
   * Why {@code amount} is not a valid amount of the (valid) currency {@code currencyCode}, in the
   * caller's terms ("has 3 decimals; EUR allows 2"), or {@code null} if it is one.
   */
  public static String amountProblem(String amount, String currencyCode) {
    Currency currency = currency(currencyCode);
    if (amount == null) {
      return "must be given";
    }
    if (SIGNED_DECIMAL.matcher(amount).matches() && amount.startsWith("-")) {
      return "must be greater than zero";
    }
    if (!DECIMAL.matcher(amount).matches()) {
      return "must be a decimal string such as \"10.00\"";
    }
    BigDecimal value = new BigDecimal(amount);
    if (value.signum() <= 0) {
      return "must be greater than zero";
    }
    if (value.compareTo(MAX) > 0) {
      return "must be at most " + MAX.toPlainString();
    }
    int decimals = value.stripTrailingZeros().scale();
    int allowed = currency.getDefaultFractionDigits();
    if (decimals > allowed) {
      return "has "
          + decimals
          + (decimals == 1 ? " decimal; " : " decimals; ")
          + currency.getCurrencyCode()
          + (allowed == 0 ? " allows none" : " allows " + allowed);
    }
    return null;
  }

  /** The amount at the currency's scale, e.g. {@code "10.00"}; call only on valid input. */
  public static String normalize(String amount, String currencyCode) {
    return new BigDecimal(amount)
        .setScale(currency(currencyCode).getDefaultFractionDigits())
        .toPlainString();
  }

  public static String normalize(BigDecimal amount, String currencyCode) {
    return amount.setScale(currency(currencyCode).getDefaultFractionDigits()).toPlainString();
  }
}
