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
    @Schema(
            allowableValues = {
              "LOCAL_PAYMENT_CREATED",
              "PROVIDER_REQUEST_SENT",
              "COMPLETED",
              "DECLINED",
              "FAILED"
            },
            description =
                "COMPLETED once charged; DECLINED by the provider; FAILED when it waited for a"
                    + " retry too long; the others while the provider's answer is awaited")
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
