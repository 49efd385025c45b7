package dev.idemkit.examples.payments.payments;

import dev.idemkit.spring.boot.CanonicalCommand;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** {@code POST /v1/payments}: version 1 of the create-payment command. */
public record CreatePaymentRequest(
    @NotBlank @Size(max = 64) @Pattern(regexp = "[A-Za-z0-9_-]+") String accountId,
    @NotNull String amount,
    @NotNull String currency,
    @NotBlank
        @Size(max = 128)
        @Pattern(regexp = "[^\\p{Cc}\\p{Cs}]*", message = "must not contain control characters")
        String merchantReference,
    @Pattern(regexp = "(?i)web|mobile|pos", message = "must be one of web, mobile, pos")
        String channel)
    implements CanonicalCommand {

  @AssertTrue(message = "must be a valid amount of the currency")
  public boolean isAmountValid() {
    return Money.problem(amount, currency) == null;
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
