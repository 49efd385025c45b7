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

  private Money() {}

  /** The ISO 4217 currency, upper case, or {@code null} if unknown. */
  public static Currency currency(String code) {
    if (code == null || !code.matches("[A-Za-z]{3}")) {
      return null;
    }
    try {
      Currency c = Currency.getInstance(code.toUpperCase(Locale.ROOT));
      return c.getDefaultFractionDigits() < 0 ? null : c;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** Why {@code amount} is not a valid amount of {@code currency}, or {@code null} if it is. */
  public static String problem(String amount, String currencyCode) {
    Currency currency = currency(currencyCode);
    if (currency == null) {
      return "currency must be an ISO 4217 code such as EUR";
    }
    if (amount == null || !DECIMAL.matcher(amount).matches()) {
      return "amount must be a decimal string such as \"10.00\"";
    }
    BigDecimal value = new BigDecimal(amount);
    if (value.signum() <= 0) {
      return "amount must be greater than zero";
    }
    if (value.compareTo(MAX) > 0) {
      return "amount must be at most " + MAX.toPlainString();
    }
    if (value.stripTrailingZeros().scale() > currency.getDefaultFractionDigits()) {
      return "amount has more decimals than "
          + currency.getCurrencyCode()
          + " allows ("
          + currency.getDefaultFractionDigits()
          + ")";
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
