package dev.idemkit.examples.payments.payments;

/** A payment as the API shows it. */
public record PaymentResponse(
    String paymentId,
    String status,
    String accountId,
    String amount,
    String currency,
    String merchantReference,
    String channel,
    String providerChargeId,
    String createdAt) {}
