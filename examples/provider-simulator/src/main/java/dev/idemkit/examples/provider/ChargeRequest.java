package dev.idemkit.examples.provider;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The body of {@code POST /charges}: {@code {"amount":"10.00","currency":"EUR","reference":"..."}}.
 * A value may also come as a number or a literal (its text is kept as written); other fields are
 * ignored.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
record ChargeRequest(String amount, String currency, String reference) {}
