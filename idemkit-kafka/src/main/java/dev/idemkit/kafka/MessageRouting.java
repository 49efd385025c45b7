package dev.idemkit.kafka;

import dev.idemkit.outbox.EventEnvelope;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import javax.sql.DataSource;

/**
 * Where a {@link KafkaEventConsumer} applies each message when the application's data lives in
 * several databases (tenants on shards, docs/scaling.md): one consumer group reads every message,
 * and each message is applied in the database of its route, with its inbox row and the handler's
 * writes in one transaction there. The consumer's DataSource answers the database of the route
 * bound by {@link #on} (a routing DataSource, such as the Spring Boot starter's {@code
 * TenantShards}); its inbox is that one DataSource's, so an operator's call on the inbox (parked,
 * held, re-queue) works on whichever route the caller binds.
 *
 * <p>One group, not one per database: the group keeps one offset per partition for every route, so
 * a message is applied on the route its tenant has when it is read, and a tenant that moves between
 * databases takes its inbox rows (what was applied) with it. Groups per database would each keep
 * offsets of their own, and a message one group passed over while its tenant was elsewhere would be
 * applied by no one after the move.
 */
public interface MessageRouting {

  /** Every route, in a fixed order; at least one. */
  List<String> routes();

  /**
   * The route {@code message} is applied on. Throws when it cannot be applied now (its tenant is
   * moving, or is served elsewhere): the message fails without an attempt counted, and its
   * partition is read again from it after the backoff.
   */
  String route(EventEnvelope message);

  /** Runs {@code work} with {@code route} bound, so that the consumer's DataSource answers it. */
  <T> T on(String route, Callable<T> work) throws Exception;

  /** The database of {@code route} itself, whatever is bound: the consumer's default clock's. */
  DataSource dataSource(String route);

  /** One database: every message is applied on {@code dataSource}. */
  static MessageRouting single(DataSource dataSource) {
    Objects.requireNonNull(dataSource, "dataSource");
    return new MessageRouting() {
      @Override
      public List<String> routes() {
        return List.of("default");
      }

      @Override
      public String route(EventEnvelope message) {
        return "default";
      }

      @Override
      public <T> T on(String route, Callable<T> work) throws Exception {
        return work.call();
      }

      @Override
      public DataSource dataSource(String route) {
        return dataSource;
      }
    };
  }
}
