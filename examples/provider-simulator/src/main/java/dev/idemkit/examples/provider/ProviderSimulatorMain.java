package dev.idemkit.examples.provider;

import dev.idemkit.jdbc.IdemkitDatabase;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Runs the simulator alone: {@code java -jar provider-simulator-standalone.jar [--port 8081]
 * [--faults drop-after-charge:0.1,error-before-charge:0.05] [--late-answer-ms 10000]}. Its data:
 * {@code PROVIDER_JDBC_URL} if set, else an embedded PostgreSQL in {@code PROVIDER_DATA_DIR}
 * (default {@code ~/.idemkit/provider-postgres}).
 */
public final class ProviderSimulatorMain {

  private ProviderSimulatorMain() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(arg(args, "--port", "8081"));
    ProviderSimulator.Config config =
        ProviderSimulator.Config.defaults(port)
            .withProbabilities(
                ProviderSimulator.Config.parseProbabilities(arg(args, "--faults", "")))
            .withLateAnswer(
                Duration.ofMillis(Long.parseLong(arg(args, "--late-answer-ms", "10000"))))
            .withLookupOutage(
                Duration.ofMillis(Long.parseLong(arg(args, "--lookup-outage-ms", "5000"))));
    String url = System.getenv("PROVIDER_JDBC_URL");
    String dir = System.getenv("PROVIDER_DATA_DIR");
    IdemkitDatabase db =
        url != null && !url.isBlank()
            ? IdemkitDatabase.connect(
                url,
                System.getenv("PROVIDER_JDBC_USER"),
                System.getenv("PROVIDER_JDBC_PASSWORD"),
                20)
            : IdemkitDatabase.embedded(
                dir != null && !dir.isBlank()
                    ? Path.of(dir)
                    : Path.of(System.getProperty("user.home"), ".idemkit", "provider-postgres"),
                20);
    ProviderSimulator simulator = ProviderSimulator.start(config, db.dataSource());
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  simulator.close();
                  db.close();
                }));
    System.out.println(
        "Provider simulator on http://"
            + config.host()
            + ":"
            + simulator.port()
            + " ("
            + db.description()
            + "), faults "
            + config.probabilities());
  }

  private static String arg(String[] args, String name, String fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }
}
