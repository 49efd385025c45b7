/**
 * Spring Boot auto-configuration: Idemkit on the application's {@code DataSource} and Spring
 * transactions.
 *
 * <ul>
 *   <li>Annotate a handler method with {@link dev.idemkit.spring.boot.Idempotent}: {@link
 *       dev.idemkit.spring.boot.IdempotentMethodInterceptor} reads its {@code Idempotency-Key},
 *       tenant and fingerprint, runs it through the engine in the handler's transaction, and
 *       answers with the stored response, or with an RFC 9457 problem ({@link
 *       dev.idemkit.spring.boot.Problems}) whose stable {@link dev.idemkit.spring.boot.ErrorCode}
 *       says what to do. A phased handler returns the {@link dev.idemkit.PhasedOperation} to run; a
 *       {@link dev.idemkit.spring.boot.RecoverableOperation} bean lets the recovery worker finish
 *       it after a crash.
 *   <li>{@link dev.idemkit.spring.boot.IdemkitAutoConfiguration} and its metrics, Web MVC and Kafka
 *       siblings are thin shells: every bean backs off when the application defines its own.
 *       Settings are {@code idemkit.*} ({@link dev.idemkit.spring.boot.IdemkitProperties}).
 *   <li>Background work: {@link dev.idemkit.spring.boot.IdempotencyRecoveryWorker}, {@link
 *       dev.idemkit.spring.boot.IdempotencyCleanupWorker}, {@link
 *       dev.idemkit.spring.boot.IdempotencyQuotaWorker} and {@link
 *       dev.idemkit.spring.boot.InboxCleanupWorker}, each a Spring lifecycle ({@code
 *       PollingLifecycle}) on the core's {@link dev.idemkit.support.PollingWorker}.
 * </ul>
 *
 * <p>Logging: SLF4J, the API Spring Boot itself logs through and binds to its logging system, so
 * the starter's lines follow the application's logging configuration like Spring's own.
 */
package dev.idemkit.spring.boot;
