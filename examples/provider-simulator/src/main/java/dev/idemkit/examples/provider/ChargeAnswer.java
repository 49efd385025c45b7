package dev.idemkit.examples.provider;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A charge as the provider answers it, to the charge itself (201, or 402 with a {@code
 * declineCode}) and to a lookup by key (200, without one). Written with its keys in alphabetical
 * order, as every answer of the simulator.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record ChargeAnswer(
    String chargeId,
    String status,
    String amount,
    String currency,
    String reference,
    String declineCode) {}
