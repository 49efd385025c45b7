package dev.idemkit.bench;

import java.util.ArrayList;
import java.util.List;

/** The benchmarks' command-line arguments: {@code --name value}, repeatable where a list. */
final class BenchArgs {

  private BenchArgs() {}

  static int intArg(String[] args, String name, int fallback) {
    return Integer.parseInt(stringArg(args, name, String.valueOf(fallback)));
  }

  static List<String> stringArgs(String[] args, String name) {
    List<String> values = new ArrayList<>();
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        values.add(args[++i]);
      }
    }
    return values;
  }

  static String stringArg(String[] args, String name, String fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }
}
