package dev.idemkit.kafka;

import dev.idemkit.outbox.EventEnvelope;
import dev.idemkit.outbox.InboxConsumer;
import dev.idemkit.outbox.spi.MessageReceiver.Received;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A consumer's inbox on its routes ({@link MessageRouting}): a poll's messages split by route, each
 * route's applied as one batch with that route bound, and the outcomes merged back in order; the
 * operators' calls (held, released, re-queued) made on every route. One route: the inbox itself.
 */
final class RoutedInbox {

  private static final Logger LOG = Logger.getLogger(KafkaEventConsumer.class.getName());

  private final String name;
  private final InboxConsumer inbox;
  private final MessageRouting routing;

  RoutedInbox(String name, InboxConsumer inbox, MessageRouting routing) {
    this.name = name;
    this.inbox = inbox;
    this.routing = routing;
  }

  /**
   * The messages' outcomes, in their order: each route's messages go to the inbox as one batch,
   * with the route bound. A message whose route cannot be told now, and every message of a route
   * whose batch failed outside the handler (the inbox counts the handler's failures, Errors
   * included), is {@link Received#FAILED FAILED}: read again after a backoff, no attempt counted.
   */
  List<Received> receive(List<EventEnvelope> messages) {
    Received[] out = new Received[messages.size()];
    Map<String, List<Integer>> byRoute = new LinkedHashMap<>();
    int unroutable = 0;
    RuntimeException firstUnroutable = null;
    for (int k = 0; k < messages.size(); k++) {
      try {
        byRoute.computeIfAbsent(routing.route(messages.get(k)), r -> new ArrayList<>()).add(k);
      } catch (RuntimeException e) {
        out[k] = Received.FAILED;
        unroutable++;
        firstUnroutable = firstUnroutable == null ? e : firstUnroutable;
      }
    }
    if (firstUnroutable != null) {
      LOG.warning(
          name
              + ": "
              + unroutable
              + " message(s) cannot be applied now, read again after a backoff: "
              + firstUnroutable.getMessage());
    }
    for (Map.Entry<String, List<Integer>> route : byRoute.entrySet()) {
      List<EventEnvelope> batch = route.getValue().stream().map(messages::get).toList();
      List<Received> outcomes;
      try {
        outcomes = routing.on(route.getKey(), () -> inbox.receive(batch));
      } catch (Exception | Error e) {
        LOG.log(
            Level.WARNING,
            name + ": the inbox failed on a batch of " + batch.size() + " on " + route.getKey(),
            e);
        outcomes = batch.stream().map(m -> Received.FAILED).toList();
      }
      if (outcomes.size() != batch.size()) {
        throw new IllegalStateException(
            name + ": the inbox answered " + outcomes.size() + " outcomes for " + batch.size());
      }
      for (int j = 0; j < batch.size(); j++) {
        out[route.getValue().get(j)] = outcomes.get(j);
      }
    }
    return Arrays.asList(out);
  }

  /** {@link InboxConsumer#releaseHeldMessages} on every route; the messages it applied. */
  List<EventEnvelope> releaseHeld() throws SQLException {
    List<EventEnvelope> applied = new ArrayList<>();
    onEach(route -> applied.addAll(inbox.releaseHeldMessages()));
    return applied;
  }

  /** Up to {@code limit} held messages of every route, longest held first. */
  List<InboxConsumer.HeldMessage> held(int limit) throws SQLException {
    List<InboxConsumer.HeldMessage> held = new ArrayList<>();
    onEach(route -> held.addAll(inbox.held(limit)));
    held.sort(Comparator.comparing(InboxConsumer.HeldMessage::heldAt));
    return List.copyOf(held.subList(0, Math.min(limit, held.size())));
  }

  /** The held messages' count and oldest time, every route together. */
  InboxConsumer.HeldSummary heldSummary() throws SQLException {
    long[] count = {0};
    Instant[] oldest = {null};
    onEach(
        route -> {
          InboxConsumer.HeldSummary one = inbox.heldSummary();
          count[0] += one.count();
          if (one.oldestHeldAt() != null
              && (oldest[0] == null || one.oldestHeldAt().isBefore(oldest[0]))) {
            oldest[0] = one.oldestHeldAt();
          }
        });
    return new InboxConsumer.HeldSummary(count[0], oldest[0]);
  }

  /** Re-queues a parked message on the route where it is parked; null if none has it parked. */
  Received requeue(UUID messageId) throws SQLException {
    for (String route : routing.routes()) {
      Received outcome = onRoute(route, () -> inbox.requeue(messageId));
      if (outcome != null) {
        return outcome;
      }
    }
    return null;
  }

  /** Work on the inbox with a route bound. */
  private interface RouteWork {
    void run(String route) throws SQLException;
  }

  /** Runs {@code work} on every route, each bound; throws the first failure after them all. */
  private void onEach(RouteWork work) throws SQLException {
    SQLException first = null;
    for (String route : routing.routes()) {
      try {
        onRoute(
            route,
            () -> {
              work.run(route);
              return null;
            });
      } catch (SQLException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private <T> T onRoute(String route, Callable<T> work) throws SQLException {
    try {
      return routing.on(route, work);
    } catch (SQLException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
