package dev.idemkit.kafka;

import dev.idemkit.kafka.TopicRetention.Bounded;
import dev.idemkit.kafka.TopicRetention.Unbounded;
import dev.idemkit.kafka.TopicRetention.Unknown;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * A Kafka consumer's start-up check that its inbox remembers applied ids for longer than its topics
 * may deliver a record again. The redelivery horizon is what the cluster keeps: a topic's {@code
 * retention.ms} (a record can be read again from the earliest offset as long as it is there, e.g.
 * after the group's committed offsets expired), for ever with {@code retention.ms=-1} or a {@code
 * cleanup.policy} without {@code delete}. {@link #read} asks the cluster (DescribeConfigs on the
 * topics; the broker's defaults for a topic not created yet), {@link #verify} decides.
 */
final class RetentionCheck {

  private static final Logger LOG = Logger.getLogger(KafkaEventConsumer.class.getName());

  private static final String INBOX_RETENTION_SETTING =
      "KafkaEventConsumer.Builder.inboxRetention; Spring Boot: idemkit.events.kafka.inbox-retention";
  private static final String ACCEPT_SETTING =
      "KafkaEventConsumer.Builder.acceptUnboundedRetention(true); Spring Boot:"
          + " idemkit.events.kafka.accept-unbounded-retention=true";
  private static final String HORIZON_SETTING =
      "KafkaEventConsumer.Builder.redeliveryHorizon; Spring Boot:"
          + " idemkit.events.kafka.redelivery-horizon";

  private RetentionCheck() {}

  /**
   * What the cluster says of each topic's retention, within about {@code timeout} in all: an admin
   * client on the consumer's connection settings (bootstrap servers, security) describes the
   * topics' configuration in one request; for topics that do not exist yet, the configuration a
   * broker gives a new topic ({@code log.retention.ms}, {@code .minutes} or {@code .hours}; {@code
   * log.cleanup.policy}). What it cannot learn in time is {@link Unknown}.
   *
   * @throws IllegalStateException if no Kafka client can be created on these settings, e.g. none of
   *     the hosts of {@code bootstrap.servers} resolves (Kafka refuses such a list, for the
   *     consumer's own client too), naming the setting
   */
  static List<TopicRetention> read(
      String consumer, Properties consumerSettings, List<String> topics, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    int timeoutMs = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    Properties settings = new Properties();
    Set<String> adminSettings = AdminClientConfig.configNames();
    consumerSettings.forEach(
        (key, value) -> {
          if (adminSettings.contains(String.valueOf(key))) {
            settings.put(key, value);
          }
        });
    settings.put(
        AdminClientConfig.CLIENT_ID_CONFIG,
        consumerSettings.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-retention-check");
    settings.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
    settings.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);

    Map<String, TopicRetention> found = new LinkedHashMap<>();
    Admin admin;
    try {
      admin = Admin.create(settings);
    } catch (KafkaException e) {
      Throwable root = rootCause(e);
      String reason = root.getClass().getSimpleName() + ": " + root.getMessage();
      if (String.valueOf(root.getMessage()).contains(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
        throw new IllegalStateException(
            "Kafka consumer "
                + consumer
                + " cannot start: no Kafka client can use bootstrap.servers="
                + consumerSettings.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)
                + " ("
                + reason
                + "). Name host:port pairs of which at least one resolves (Spring Boot:"
                + " idemkit.events.kafka.bootstrap-servers); an unreachable broker only delays"
                + " the start, but a list Kafka cannot use is refused by every client.",
            e);
      }
      throw new IllegalStateException(
          "Kafka consumer "
              + consumer
              + " cannot start: no Kafka client can be created with its settings ("
              + reason
              + "); the consumer's own client would be refused too.",
          e);
    }
    try {
      Map<ConfigResource, KafkaFuture<Config>> described =
          admin
              .describeConfigs(
                  topics.stream()
                      .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t))
                      .toList(),
                  new DescribeConfigsOptions().timeoutMs(timeoutMs))
              .values();
      List<String> notCreated = new ArrayList<>();
      for (String topic : topics) {
        try {
          Config config =
              described
                  .get(new ConfigResource(ConfigResource.Type.TOPIC, topic))
                  .get(remainingMs(deadline), TimeUnit.MILLISECONDS);
          found.put(topic, fromTopic(topic, config));
        } catch (ExecutionException e) {
          if (e.getCause() instanceof UnknownTopicOrPartitionException) {
            notCreated.add(topic);
          } else {
            found.put(topic, new Unknown(topic, failure(e.getCause(), timeout)));
          }
        } catch (TimeoutException e) {
          found.put(topic, new Unknown(topic, noAnswer(timeout)));
        }
      }
      if (!notCreated.isEmpty()) {
        readBrokerDefaults(admin, notCreated, deadline, timeout).forEach(found::put);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      topics.forEach(t -> found.putIfAbsent(t, new Unknown(t, "interrupted while asking")));
    } finally {
      admin.close(Duration.ZERO); // what is still pending has timed out for us already
    }
    return topics.stream().map(found::get).toList();
  }

  /** The retention a topic not created yet would get, from one broker's defaults. */
  private static Map<String, TopicRetention> readBrokerDefaults(
      Admin admin, List<String> topics, long deadline, Duration timeout)
      throws InterruptedException {
    Map<String, TopicRetention> found = new LinkedHashMap<>();
    String what;
    try {
      int ms = (int) Math.max(1, remainingMs(deadline));
      Collection<Node> nodes =
          admin
              .describeCluster(new DescribeClusterOptions().timeoutMs(ms))
              .nodes()
              .get(remainingMs(deadline), TimeUnit.MILLISECONDS);
      ConfigResource broker =
          new ConfigResource(ConfigResource.Type.BROKER, nodes.iterator().next().idString());
      Config config =
          admin
              .describeConfigs(List.of(broker), new DescribeConfigsOptions().timeoutMs(ms))
              .values()
              .get(broker)
              .get(remainingMs(deadline), TimeUnit.MILLISECONDS);
      for (String topic : topics) {
        found.put(topic, fromBrokerDefaults(topic, config));
      }
      return found;
    } catch (ExecutionException e) {
      what = failure(e.getCause(), timeout);
    } catch (TimeoutException e) {
      what = noAnswer(timeout);
    }
    for (String topic : topics) {
      found.put(
          topic,
          new Unknown(
              topic, "not created yet, and the broker's defaults could not be read: " + what));
    }
    return found;
  }

  static TopicRetention fromTopic(String topic, Config config) {
    String policy = value(config, "cleanup.policy");
    if (policy != null && !deletes(policy)) {
      return new Unbounded(topic, "cleanup.policy=" + policy);
    }
    String retention = value(config, "retention.ms");
    if (retention == null) {
      return new Unknown(topic, "the cluster did not say its retention.ms");
    }
    long ms = Long.parseLong(retention);
    return ms < 0
        ? new Unbounded(topic, "retention.ms=" + retention)
        : new Bounded(topic, Duration.ofMillis(ms), "retention.ms=" + retention);
  }

  /**
   * A broker's {@code log.retention.ms}, else {@code log.retention.minutes}, else {@code
   * log.retention.hours} (Kafka's own precedence), and {@code log.cleanup.policy}.
   */
  static TopicRetention fromBrokerDefaults(String topic, Config config) {
    String policy = value(config, "log.cleanup.policy");
    if (policy != null && !deletes(policy)) {
      return new Unbounded(topic, "not created yet: the broker's log.cleanup.policy=" + policy);
    }
    for (String unit : List.of("ms", "minutes", "hours")) {
      String name = "log.retention." + unit;
      String value = value(config, name);
      if (value == null) {
        continue;
      }
      long n = Long.parseLong(value);
      String source = "not created yet: the broker's " + name + "=" + value;
      if (n < 0) {
        return new Unbounded(topic, source);
      }
      Duration retention =
          switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "minutes" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
          };
      return new Bounded(topic, retention, source);
    }
    return new Unknown(topic, "not created yet, and the broker did not say its log.retention.*");
  }

  /**
   * Refuses to start (throws) if a topic may deliver a record again after the inbox forgot it: its
   * retention is not shorter than {@code inboxRetention}, or it keeps records for ever and that was
   * not accepted. Logs what it decided on: the topics' retention (INFO), unbounded ones accepted
   * (INFO), and topics the cluster could not tell, for which the configured horizon stands (WARN;
   * the inbox has already checked its retention against that one when it was built).
   *
   * @throws IllegalStateException naming each such topic, its setting, the inbox retention and what
   *     to change
   */
  static void verify(
      String consumer,
      Duration inboxRetention,
      Duration configuredHorizon,
      boolean acceptUnbounded,
      List<TopicRetention> retentions) {
    List<String> tooLong = new ArrayList<>();
    List<String> forEver = new ArrayList<>();
    List<String> accepted = new ArrayList<>();
    List<String> fine = new ArrayList<>();
    Map<String, List<String>> unknownByReason = new LinkedHashMap<>();
    Duration longest = Duration.ZERO;
    for (TopicRetention r : retentions) {
      if (r instanceof Bounded b) {
        String what =
            "topic "
                + b.topic()
                + " keeps records for "
                + readable(b.retention())
                + " ("
                + b.source()
                + ")";
        if (inboxRetention.compareTo(b.retention()) <= 0) {
          tooLong.add(what);
          longest = b.retention().compareTo(longest) > 0 ? b.retention() : longest;
        } else {
          fine.add(what);
        }
      } else if (r instanceof Unbounded u) {
        String what =
            "topic "
                + u.topic()
                + (u.compacted() ? " keeps each key's latest record" : " keeps records")
                + " for ever ("
                + u.setting()
                + ")";
        (acceptUnbounded ? accepted : forEver).add(what);
      } else if (r instanceof Unknown k) {
        unknownByReason.computeIfAbsent(k.reason(), x -> new ArrayList<>()).add(k.topic());
      }
    }

    if (!tooLong.isEmpty() || !forEver.isEmpty()) {
      StringBuilder m = new StringBuilder();
      m.append("Kafka consumer ")
          .append(consumer)
          .append(" refuses to start: its inbox forgets applied message ids after ")
          .append(readable(inboxRetention))
          .append(" (inbox retention), but ");
      List<String> problems = new ArrayList<>(tooLong);
      problems.addAll(forEver);
      m.append(String.join("; ", problems))
          .append(
              ". A record is delivered again as long as its topic keeps it (read from the earliest"
                  + " offset once the group's committed offsets expired or were reset), and one"
                  + " delivered after the inbox forgot its id would be applied twice.");
      if (!tooLong.isEmpty()) {
        m.append(" Raise the inbox retention above ")
            .append(readable(longest))
            .append(" (")
            .append(INBOX_RETENTION_SETTING)
            .append(
                ") or lower the topic's retention.ms (a topic not created yet: create it with one).");
      }
      if (!forEver.isEmpty()) {
        m.append(
                " Give the topic a finite retention.ms (and cleanup.policy delete, or"
                    + " compact,delete) shorter than the inbox retention, or, if a redelivery after"
                    + " that long cannot happen for this consumer (its group's offsets are never"
                    + " lost or reset to the earliest), accept it: ")
            .append(ACCEPT_SETTING)
            .append('.');
      }
      throw new IllegalStateException(m.toString());
    }

    if (!fine.isEmpty()) {
      LOG.info(
          "Kafka consumer "
              + consumer
              + ": its inbox retention ("
              + readable(inboxRetention)
              + ") exceeds what its topics keep: "
              + String.join("; ", fine));
    }
    if (!accepted.isEmpty()) {
      LOG.info(
          "Kafka consumer "
              + consumer
              + ": "
              + String.join("; ", accepted)
              + ", accepted ("
              + ACCEPT_SETTING
              + "): a record delivered again after "
              + readable(inboxRetention)
              + " (inbox retention) would be applied twice");
    }
    unknownByReason.forEach(
        (reason, topics) ->
            LOG.log(
                Level.WARNING,
                "Kafka consumer "
                    + consumer
                    + ": could not read the retention of "
                    + (topics.size() == 1 ? "topic " : "topics ")
                    + String.join(", ", topics)
                    + " ("
                    + reason
                    + "); assuming the configured redelivery horizon, "
                    + readable(configuredHorizon)
                    + " ("
                    + HORIZON_SETTING
                    + "), which the inbox retention ("
                    + readable(inboxRetention)
                    + ") exceeds. The topics' retention is checked again at the next start."));
  }

  /** Whether a cleanup policy deletes records by time ({@code delete}, {@code compact,delete}). */
  private static boolean deletes(String policy) {
    return Arrays.stream(policy.split(",")).map(String::trim).anyMatch("delete"::equals);
  }

  private static String value(Config config, String name) {
    ConfigEntry entry = config.get(name);
    return entry == null ? null : entry.value();
  }

  static Throwable rootCause(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  private static long remainingMs(long deadline) {
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
  }

  private static String noAnswer(Duration timeout) {
    return "no answer from the cluster within " + readable(timeout);
  }

  private static String failure(Throwable cause, Duration timeout) {
    if (cause instanceof org.apache.kafka.common.errors.TimeoutException) {
      return noAnswer(timeout);
    }
    if (cause instanceof AuthorizationException) {
      return "not authorized to describe its configuration (grant DescribeConfigs): "
          + cause.getMessage();
    }
    return cause.getClass().getSimpleName() + ": " + cause.getMessage();
  }

  /** {@code 30 days}, {@code 36 hours}, {@code 5 s}; else the ISO form. */
  static String readable(Duration d) {
    long ms = d.toMillis();
    if (!d.isZero() && d.getNano() % 1_000_000 == 0) {
      if (ms % 86_400_000L == 0) {
        return plural(ms / 86_400_000L, "day");
      }
      if (ms % 3_600_000L == 0) {
        return plural(ms / 3_600_000L, "hour");
      }
      if (ms % 60_000L == 0) {
        return plural(ms / 60_000L, "minute");
      }
      if (ms % 1_000L == 0) {
        return ms / 1_000L + " s";
      }
      return ms + " ms";
    }
    return d.toString();
  }

  private static String plural(long n, String unit) {
    return n + " " + unit + (n == 1 ? "" : "s");
  }
}
