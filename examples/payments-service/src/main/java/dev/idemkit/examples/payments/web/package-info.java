/**
 * The HTTP layer every domain uses and none of them owns: the gate in front of every request (API
 * keys, rate limit, body size, path and query spelling), problems with a stable errorCode, the
 * rules for text and amounts a request brings, the OpenAPI document, the start-up banner, and the
 * operators' endpoints (records, issued keys, events, a tenant's erasure). It knows no domain.
 */
package dev.idemkit.examples.payments.web;
