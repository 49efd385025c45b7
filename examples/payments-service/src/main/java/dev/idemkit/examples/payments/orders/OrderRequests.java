package dev.idemkit.examples.payments.orders;

import dev.idemkit.examples.payments.payments.Money;
import dev.idemkit.spring.boot.CanonicalCommand;
import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The shop's order commands. */
public final class OrderRequests {

  private OrderRequests() {}

  /** {@code POST /v1/orders}. */
  public record CreateOrder(
      @NotNull String currency, @NotEmpty @Size(max = 100) List<@Valid @NotNull Item> items)
      implements CanonicalCommand {

    @AssertTrue(message = "must be an ISO 4217 code such as EUR")
    public boolean isCurrencyValid() {
      return Money.currency(currency) != null;
    }

    @AssertTrue(message = "every unitPrice must be a valid amount of the currency")
    public boolean isPricesValid() {
      return items == null
          || items.stream()
              .allMatch(
                  i ->
                      i == null
                          || i.unitPrice() == null
                          || Money.problem(i.unitPrice(), currency) == null);
    }

    @AssertTrue(message = "the order total must be at most 1000000000")
    public boolean isTotalWithinLimit() {
      try {
        return !isCurrencyValid()
            || !isPricesValid()
            || new BigDecimal(total()).compareTo(Money.MAX) <= 0;
      } catch (RuntimeException e) {
        return true; // other constraints report what is wrong
      }
    }

    public String normalizedCurrency() {
      return currency.toUpperCase(Locale.ROOT);
    }

    /** The order total at the currency's scale. */
    public String total() {
      BigDecimal total = BigDecimal.ZERO;
      for (Item item : items) {
        total =
            total.add(
                new BigDecimal(item.unitPrice()).multiply(BigDecimal.valueOf(item.quantity())));
      }
      return Money.normalize(total, currency);
    }

    @Override
    public Object canonicalForm() {
      Map<String, Object> form = new LinkedHashMap<>();
      form.put("v", 1);
      form.put("currency", normalizedCurrency());
      form.put(
          "items",
          items.stream()
              .map(
                  i ->
                      Map.of(
                          "sku", i.sku(),
                          "quantity", i.quantity(),
                          "unitPrice", Money.normalize(i.unitPrice(), currency)))
              .toList());
      return form;
    }
  }

  /** One order line. */
  public record Item(
      @NotBlank
          @Size(max = 64)
          @Pattern(regexp = "[^\\p{Cc}\\p{Cs}]*", message = "must not contain control characters")
          String sku,
      @NotNull @Min(1) @Max(10_000) Integer quantity,
      @NotNull String unitPrice) {}

  /** {@code POST /v1/orders/{id}/confirm-payment}. */
  public record ConfirmPayment(@NotNull String amount, @NotNull String currency)
      implements CanonicalCommand {

    @AssertTrue(message = "must be a valid amount of the currency")
    public boolean isAmountValid() {
      return Money.problem(amount, currency) == null;
    }

    @Override
    public Object canonicalForm() {
      return Map.of(
          "v", 1,
          "amount", Money.normalize(amount, currency),
          "currency", currency.toUpperCase(Locale.ROOT));
    }
  }

  /** An order as the API shows it. */
  public record OrderResponse(
      String orderId, String status, String total, String currency, String paidAt) {}

  /** The answer to confirm-payment. */
  public record PaidResponse(String orderId, String status, String paidAt) {}
}
