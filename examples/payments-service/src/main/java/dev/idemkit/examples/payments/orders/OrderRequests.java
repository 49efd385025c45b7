package dev.idemkit.examples.payments.orders;

import dev.idemkit.examples.payments.payments.CreatePaymentRequest;
import dev.idemkit.examples.payments.payments.Money;
import dev.idemkit.examples.payments.web.InputText;
import dev.idemkit.examples.payments.web.MoneyChecked;
import dev.idemkit.spring.boot.CanonicalCommand;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The shop's order commands. */
public final class OrderRequests {

  private OrderRequests() {}

  /** {@code POST /v1/orders}. */
  @MoneyChecked.ValidMoney
  public record CreateOrder(
      @NotNull String currency, @NotEmpty @Size(max = 100) List<@Valid @NotNull Item> items)
      implements CanonicalCommand, MoneyChecked {

    @Override
    public List<FieldProblem> moneyProblems() {
      List<FieldProblem> problems = new ArrayList<>();
      if (currency == null) {
        return problems; // @NotNull says so
      }
      String currencyProblem = Money.currencyProblem(currency);
      if (currencyProblem != null) {
        problems.add(new FieldProblem("currency", currencyProblem));
        return problems;
      }
      if (items == null) {
        return problems;
      }
      for (int i = 0; i < items.size(); i++) {
        Item item = items.get(i);
        String problem =
            item == null || item.unitPrice() == null
                ? null
                : Money.amountProblem(item.unitPrice(), currency);
        if (problem != null) {
          problems.add(new FieldProblem("items[" + i + "].unitPrice", problem));
        }
      }
      if (problems.isEmpty()
          && items.stream()
              .allMatch(i -> i != null && i.quantity() != null && i.unitPrice() != null)
          && new BigDecimal(total()).compareTo(Money.MAX) > 0) {
        problems.add(
            new FieldProblem(
                "items", "add up to more than " + Money.MAX.toPlainString() + " " + currency));
      }
      return problems;
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

  /** One order line; its sku is a reference, compared in its one form (NFC). */
  public record Item(
      @NotBlank @Size(max = 64) @InputText.Reference String sku,
      @NotNull @Min(1) @Max(10_000) Integer quantity,
      @NotNull String unitPrice) {

    public Item {
      sku = InputText.canonicalReference(sku);
    }
  }

  /** {@code POST /v1/orders/{id}/confirm-payment}. */
  @MoneyChecked.ValidMoney
  public record ConfirmPayment(@NotNull String amount, @NotNull String currency)
      implements CanonicalCommand, MoneyChecked {

    @Override
    public List<FieldProblem> moneyProblems() {
      return CreatePaymentRequest.moneyProblems(amount, currency);
    }

    @Override
    public Object canonicalForm() {
      return Map.of(
          "v", 1,
          "amount", Money.normalize(amount, currency),
          "currency", currency.toUpperCase(Locale.ROOT));
    }
  }

  /** An order as the API shows it: {@code paidAt} is null until it is paid. */
  @Schema(requiredProperties = {"orderId", "status", "total", "currency", "paidAt"})
  public record OrderResponse(
      @Schema(format = "uuid") String orderId,
      @Schema(allowableValues = {"PENDING_PAYMENT", "PAID"}) String status,
      String total,
      String currency,
      @Schema(
              types = {"string", "null"},
              format = "date-time")
          String paidAt) {}

  /** The answer to confirm-payment. */
  @Schema(requiredProperties = {"orderId", "status", "paidAt"})
  public record PaidResponse(
      @Schema(format = "uuid") String orderId,
      @Schema(allowableValues = {"PAID"}) String status,
      @Schema(format = "date-time") String paidAt) {}
}
