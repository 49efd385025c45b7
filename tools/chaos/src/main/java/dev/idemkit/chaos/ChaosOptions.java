package dev.idemkit.chaos;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The chaos run's command line (picocli): each option with its check, and the help generated from
 * them. An option's value is the next argument ({@code --duration PT45S}); a bad command line is a
 * {@link UsageException} whose message names the option, before anything starts.
 */
@Command(
    name = "idemkit-chaos",
    customSynopsis = "java -jar idemkit-chaos.jar [options]   (docs/proof.md)",
    optionListHeading = "%n",
    separator = " ",
    sortOptions = false,
    usageHelpWidth = 100,
    footer = {
      "",
      "Progress goes to standard error (every 10 s while the clients run); the summary, the",
      "RESULT line and the files written, to standard output.",
      "",
      "Durations are longer than zero. Exit status: 0 when the accounting holds, 1 when it does",
      "not, 2 on a usage error, when the run could not start, when no operation was",
      "acknowledged (every request failed: the run proves nothing), or when the drain after",
      "the clients did not finish within 60 s (effects on their way were not counted)."
    })
final class ChaosOptions {

  private static final ChaosRun.Config DEFAULTS =
      ChaosRun.Config.defaults(
          Path.of("examples/payments-service/target/payments-service.jar"),
          Path.of("target", "chaos"));

  @Option(
      names = "--duration",
      paramLabel = "D",
      description = "how long clients run, ISO-8601 (PT60S)")
  private Duration duration = DEFAULTS.duration();

  @Option(
      names = "--clients",
      paramLabel = "N",
      converter = ClientCount.class,
      description = "client processes (threads), each retrying its own payments")
  private int clients = DEFAULTS.clients();

  @Option(names = "--seed", paramLabel = "N", description = "the nemesis' and clients' random seed")
  private long seed = DEFAULTS.seed();

  @Option(
      names = "--nemesis",
      paramLabel = "B",
      arity = "1",
      description = "true (default) or false: kill -9, pause, cut connections")
  private boolean nemesis = DEFAULTS.nemesis();

  @Option(
      names = "--broken-store",
      paramLabel = "S",
      converter = BrokenStore.class,
      description = "find-then-insert or late-owner-overwrites: a deliberately broken build")
  private String brokenStore = DEFAULTS.brokenStore();

  @Option(
      names = "--database",
      paramLabel = "DB",
      converter = Database.class,
      description =
          "single (default), own, replicated-sync, replicated-async or shards: the payments"
              + " database on the run's one server, on a server of its own, on a primary with a"
              + " streaming standby, or on two databases of the run's one server, the service's"
              + " shards, with four tenants")
  private String database = DEFAULTS.database();

  @Option(
      names = "--nemesis-actions",
      paramLabel = "A,B",
      split = ",",
      converter = NemesisAction.class,
      description =
          "the faults, in turn: pause, terminate-connections, kill, stall-consumers (the"
              + " default four), failover (needs a replicated database), freeze-database (needs"
              + " own or replicated), cut-network, skew-clocks (needs libfaketime),"
              + " kill-during-shutdown, move-tenant (needs shards)")
  private List<String> nemesisActions = DEFAULTS.nemesisActions();

  @Option(
      names = "--request-timeout",
      paramLabel = "D",
      description = "each client request's timeout, ISO-8601")
  private Duration requestTimeout = DEFAULTS.requestTimeout();

  @Option(
      names = "--service-jar",
      paramLabel = "PATH",
      description = "(examples/payments-service/target/payments-service.jar)")
  private Path serviceJar = DEFAULTS.serviceJar();

  @Option(
      names = "--out",
      paramLabel = "DIR",
      description = "history and report files (target/chaos)")
  private Path out = DEFAULTS.out();

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "this help")
  private boolean help;

  private ChaosOptions() {}

  /**
   * The run the arguments ask for; empty when they ask for the help, which is then printed on
   * {@code helpOut}.
   *
   * @throws UsageException when an option is unknown, lacks its value or has a bad one
   */
  static Optional<ChaosRun.Config> parse(String[] args, PrintStream helpOut) {
    ChaosOptions options = new ChaosOptions();
    CommandLine line = commandLine(options);
    try {
      line.parseArgs(args);
    } catch (ParameterException e) {
      throw new UsageException(message(line, e));
    }
    if (line.isUsageHelpRequested()) {
      line.usage(helpOut);
      return Optional.empty();
    }
    if (options.nemesisActions.contains("failover") && !options.database.startsWith("replicated")) {
      throw new UsageException(
          "--nemesis-actions failover needs --database replicated-sync or replicated-async");
    }
    if (options.nemesisActions.contains("move-tenant") && !options.database.equals("shards")) {
      throw new UsageException("--nemesis-actions move-tenant needs --database shards");
    }
    if (options.nemesisActions.contains("freeze-database")
        && List.of("single", "shards").contains(options.database)) {
      throw new UsageException(
          "--nemesis-actions freeze-database needs the payments database on a server of the"
              + " run's own: --database own, replicated-sync or replicated-async");
    }
    if (options.nemesisActions.contains("skew-clocks") && Cluster.findLibfaketime().isEmpty()) {
      throw new UsageException(NO_LIBFAKETIME);
    }
    return Optional.of(
        new ChaosRun.Config(
            options.serviceJar,
            options.out,
            options.duration,
            options.clients,
            options.nemesis,
            options.brokenStore,
            options.requestTimeout,
            options.seed,
            options.database,
            List.copyOf(options.nemesisActions)));
  }

  /** Why {@code skew-clocks} cannot run here. */
  static final String NO_LIBFAKETIME =
      "--nemesis-actions skew-clocks needs libfaketime (Debian, Ubuntu: apt-get install"
          + " libfaketime), or IDEMKIT_CHAOS_LIBFAKETIME naming its libfaketime.so.1";

  /** The help, as {@code --help} prints it. */
  static String usage() {
    return commandLine(new ChaosOptions()).getUsageMessage(CommandLine.Help.Ansi.OFF);
  }

  private static CommandLine commandLine(ChaosOptions options) {
    return new CommandLine(options)
        // Every duration, seed and true/false of this command line is checked by type; the
        // clients' count and the broken store by their options' own converters.
        .registerConverter(Duration.class, new PositiveDuration())
        .registerConverter(Long.TYPE, new WholeNumber())
        .registerConverter(Boolean.TYPE, new TrueOrFalse())
        // A later value of an option replaces an earlier one; an argument starting with @ is a
        // value, not a file of arguments.
        .setOverwrittenOptionsAllowed(true)
        .setExpandAtFiles(false);
  }

  /** What the user reads: the option, then what is wrong with its value. */
  private static String message(CommandLine line, ParameterException e) {
    if (e instanceof UnmatchedArgumentException unmatched && !unmatched.getUnmatched().isEmpty()) {
      return unknownOption(line, unmatched.getUnmatched().get(0));
    }
    if (e instanceof MissingParameterException missing
        && !missing.getMissing().isEmpty()
        && missing.getMissing().get(0) instanceof OptionSpec option) {
      return option.longestName() + " needs a value";
    }
    ArgSpec spec = e.getArgSpec();
    if (e.getCause() instanceof TypeConversionException bad && spec instanceof OptionSpec option) {
      return option.longestName() + " " + bad.getMessage();
    }
    return e.getMessage();
  }

  /** An unknown option; {@code --duration=PT5M} is told to give its value as the next argument. */
  private static String unknownOption(CommandLine line, String flag) {
    int equals = flag.indexOf('=');
    if (flag.startsWith("--")
        && equals > 0
        && line.getCommandSpec().findOption(flag.substring(0, equals)) != null) {
      return "unknown option "
          + flag
          + "; give the value as the next argument: "
          + flag.substring(0, equals)
          + " "
          + flag.substring(equals + 1);
    }
    return "unknown option " + flag;
  }

  /**
   * A bad command line: the only failure that prints the usage. An {@link IllegalArgumentException}
   * from the run itself is a failure of the run, not of its options.
   */
  static final class UsageException extends IllegalArgumentException {
    UsageException(String message) {
      super(message);
    }
  }

  /** An ISO-8601 duration longer than zero. */
  static final class PositiveDuration implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String v) {
      Duration d;
      try {
        d = Duration.parse(v);
      } catch (DateTimeParseException e) {
        throw new TypeConversionException(
            "takes an ISO-8601 duration such as PT45S or PT2M, not '" + v + "'");
      }
      if (d.isNegative() || d.isZero()) {
        throw new TypeConversionException(
            "takes a duration longer than zero, such as PT45S or PT0.5S, not '" + v + "'");
      }
      return d;
    }
  }

  /** A whole number. */
  static final class WholeNumber implements ITypeConverter<Long> {
    @Override
    public Long convert(String v) {
      try {
        return Long.parseLong(v.trim());
      } catch (NumberFormatException e) {
        throw new TypeConversionException("takes a whole number, not '" + v + "'");
      }
    }
  }

  /** A number of clients, 1 to 1000. */
  static final class ClientCount implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String v) {
      long n = new WholeNumber().convert(v);
      if (n < 1 || n > 1000) {
        throw new TypeConversionException("takes a number from 1 to 1000, not " + v);
      }
      return (int) n;
    }
  }

  /** {@code true} or {@code false}, nothing else. */
  static final class TrueOrFalse implements ITypeConverter<Boolean> {
    @Override
    public Boolean convert(String v) {
      if (!v.equals("true") && !v.equals("false")) {
        throw new TypeConversionException("is true or false, not '" + v + "'");
      }
      return Boolean.parseBoolean(v);
    }
  }

  /**
   * Where the payments database is: on the one server, on a server of the run's own, or on a
   * primary with a standby.
   */
  static final class Database implements ITypeConverter<String> {
    @Override
    public String convert(String v) {
      if (!List.of("single", "own", "replicated-sync", "replicated-async", "shards").contains(v)) {
        throw new TypeConversionException(
            "is single, own, replicated-sync, replicated-async or shards, not " + v);
      }
      return v;
    }
  }

  /** One of the nemesis' faults ({@link Nemesis#ACTIONS}). */
  static final class NemesisAction implements ITypeConverter<String> {
    @Override
    public String convert(String v) {
      if (!Nemesis.ACTIONS.contains(v)) {
        throw new TypeConversionException(
            "takes faults among " + String.join(", ", Nemesis.ACTIONS) + ", not " + v);
      }
      return v;
    }
  }

  /** One of the payments service's deliberately broken stores. */
  static final class BrokenStore implements ITypeConverter<String> {
    @Override
    public String convert(String v) {
      if (!v.equals("find-then-insert") && !v.equals("late-owner-overwrites")) {
        throw new TypeConversionException("is find-then-insert or late-owner-overwrites, not " + v);
      }
      return v;
    }
  }
}
