package dev.idemkit.examples.payments.payments;

import dev.idemkit.examples.payments.web.InputText;
import dev.idemkit.examples.payments.web.MoneyChecked;
import dev.idemkit.spring.boot.CanonicalCommand;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code POST /v1/payments}: version 1 of the create-payment command. */
@MoneyChecked.ValidMoney
public record CreatePaymentRequest(
    @NotBlank @Size(max = 64) @Pattern(regexp = "[A-Za-z0-9_-]+") String accountId,
    @NotNull String amount,
    @NotNull String currency,
    @NotBlank @Size(max = 128) @InputText.Reference String merchantReference,
    @Pattern(regexp = "(?i)web|mobile|pos", message = "must be one of web, mobile, pos")
        String channel)
    implements CanonicalCommand, MoneyChecked {

  /**
   * The merchant reference in its one form (NFC, {@link InputText#canonicalReference}): the
   * business key, the lookup and the fingerprint all see {@code café} spelled with {@code é} and
   * with {@code e} + U+0301 as one reference, so a second spelling is the same payment (or a replay
   * under the same key), never a second charge.
   */
  public CreatePaymentRequest {
    merchantReference = InputText.canonicalReference(merchantReference);
  }

  @Override
  public List<FieldProblem> moneyProblems() {
    return moneyProblems(amount, currency);
  }

  /** The problems of an amount and its currency, in the caller's field names. */
  public static List<FieldProblem> moneyProblems(String amount, String currency) {
    List<FieldProblem> problems = new ArrayList<>();
    if (currency == null) {
      return problems; // @NotNull says so
    }
    String currencyProblem = Money.currencyProblem(currency);
    if (currencyProblem != null) {
      problems.add(new FieldProblem("currency", currencyProblem));
    } else if (amount != null) {
      String amountProblem = Money.amountProblem(amount, currency);
      if (amountProblem != null) {
        problems.add(new FieldProblem("amount", amountProblem));
      }
    }
    return problems;
  }

  public String normalizedCurrency() {
    return currency.toUpperCase(Locale.ROOT);
  }

  public String normalizedAmount() {
    return Money.normalize(amount, currency);
  }

  /** An absent channel means web. */
  public String normalizedChannel() {
    return channel == null ? "web" : channel.toLowerCase(Locale.ROOT);
  }

  @Override
  public Map<String, Object> canonicalForm() {
    Map<String, Object> form = new LinkedHashMap<>();
    form.put("v", 1);
    form.put("accountId", accountId);
    form.put("amount", normalizedAmount());
    form.put("currency", normalizedCurrency());
    form.put("merchantReference", merchantReference);
    form.put("channel", normalizedChannel());
    return form;
  }
}
