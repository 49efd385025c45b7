package dev.idemkit.outbox;

import java.time.Clock;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * What the rooms of one {@link InboxConsumer} share: its name, database, handler and settings, as
 * its builder checked them. {@code sequenceStart} is null for a consumer not in sequence.
 */
record InboxConfig(
    String name,
    DataSource dataSource,
    MessageHandler handler,
    int maxAttempts,
    Duration retention,
    Clock clock,
    OutboxListener listener,
    SequenceStart sequenceStart) {}
