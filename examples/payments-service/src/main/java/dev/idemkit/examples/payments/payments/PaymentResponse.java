package dev.idemkit.examples.payments.payments;

import io.swagger.v3.oas.annotations.media.Schema;

/**
 * A payment as the API shows it: every field is always there, {@code providerChargeId} null until
 * charged.
 */
@Schema(
    requiredProperties = {
      "paymentId",
      "status",
      "accountId",
      "amount",
      "currency",
      "merchantReference",
      "channel",
      "providerChargeId",
      "createdAt"
    })
public record PaymentResponse(
    @Schema(format = "uuid") String paymentId,
    String status,
    String accountId,
    String amount,
    String currency,
    String merchantReference,
    String channel,
    @Schema(
            types = {"string", "null"},
            description = "The provider's charge id; null while the payment is not charged")
        String providerChargeId,
    @Schema(format = "date-time") String createdAt) {}
