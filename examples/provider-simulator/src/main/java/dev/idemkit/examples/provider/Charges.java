package dev.idemkit.examples.provider;

import java.util.List;

/**
 * What {@code GET /charges} answers: the charges themselves, newest first and at most the limit
 * asked for, and what every charge (of the reference asked for, if one was) adds up to. Written
 * with its keys in alphabetical order, as every answer of the simulator.
 *
 * @param charges the newest charges, newest first
 * @param summary every charge counted, the listed ones and the rest
 */
public record Charges(List<Charge> charges, Summary summary) {

  /**
   * One charge as the provider keeps it.
   *
   * @param chargeId the provider's id of the charge
   * @param merchant who charged ({@code X-Merchant})
   * @param idempotencyKey the key the charge was made under, unique per merchant
   * @param reference the merchant's reference (the payment service sends its payment id)
   * @param amount the amount, without trailing zeros
   * @param currency the ISO 4217 currency code
   * @param status {@code SUCCEEDED} or {@code DECLINED}
   * @param createdAt when it was charged, an ISO-8601 instant
   */
  public record Charge(
      String chargeId,
      String merchant,
      String idempotencyKey,
      String reference,
      String amount,
      String currency,
      String status,
      String createdAt) {

    /** The charge as the provider answers a lookup of its key. */
    ChargeAnswer answer() {
      return new ChargeAnswer(chargeId, status, amount, currency, reference, null);
    }
  }

  /**
   * What the charges add up to.
   *
   * @param succeeded charges that succeeded
   * @param declined charges that were declined
   * @param distinctReferences references with a charge that succeeded
   * @param duplicateReferences successful charges beyond one per reference: money taken twice
   */
  public record Summary(
      long succeeded, long declined, long distinctReferences, long duplicateReferences) {}
}
