package dev.idemkit.spring.boot;

import dev.idemkit.outbox.InboxConsumer;
import java.util.List;

/**
 * Inbox consumers that are not beans of their own, for the starter's inbox cleanup ({@link
 * InboxCleanupWorker}): the Kafka consumers the starter starts, or an application's consumers kept
 * together in one bean. An {@link InboxConsumer} bean needs none: the cleanup finds it.
 */
@FunctionalInterface
public interface Inboxes {

  /** The consumers as they are now; asked again at every cleanup run, so it may grow. */
  List<InboxConsumer> inboxes();
}
