package dev.idemkit.client;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * An HTTP/1.1 forwarding proxy that loses answers on purpose. Each request is read whole and
 * forwarded to the upstream service, which executes it; then, as the fault source decides, the
 * upstream's answer is passed through, <em>dropped</em> (the client's connection is closed without
 * a byte: "did my payment happen?"), or <em>delayed</em> past the client's timeout. One request per
 * connection ({@code Connection: close}), which is all the tests need.
 */
final class FaultProxy implements AutoCloseable {

  /** What happens to one answer. */
  enum Fault {
    PASS,
    DROP,
    DELAY
  }

  private static final Set<String> HOP_BY_HOP =
      Set.of(
          "connection",
          "keep-alive",
          "proxy-connection",
          "upgrade",
          "http2-settings",
          "te",
          "trailer",
          "transfer-encoding");

  private final int upstreamPort;
  private final Supplier<Fault> faults;
  private final Duration delay;
  private final ServerSocket server;
  private final ExecutorService workers =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "fault-proxy");
            t.setDaemon(true);
            return t;
          });
  private final AtomicInteger forwarded = new AtomicInteger();
  private final AtomicInteger passed = new AtomicInteger();
  private final AtomicInteger dropped = new AtomicInteger();
  private final AtomicInteger delayed = new AtomicInteger();
  private final ConcurrentLinkedQueue<String> keys = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Integer> upstreamStatuses = new ConcurrentLinkedQueue<>();

  private FaultProxy(int upstreamPort, Supplier<Fault> faults, Duration delay) throws IOException {
    this.upstreamPort = upstreamPort;
    this.faults = faults;
    this.delay = delay;
    this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "fault-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * Starts a proxy in front of {@code 127.0.0.1:upstreamPort}.
   *
   * @param faults decides each answer's fate; called once per request, from many threads
   * @param delay how long a {@link Fault#DELAY delayed} answer is held
   */
  static FaultProxy start(int upstreamPort, Supplier<Fault> faults, Duration delay)
      throws IOException {
    return new FaultProxy(upstreamPort, faults, delay);
  }

  /** Drops with probability {@code drop}, delays with probability {@code delay}, else passes. */
  static Supplier<Fault> random(double drop, double delay, long seed) {
    Random random = new Random(seed);
    return () -> {
      double x;
      synchronized (random) {
        x = random.nextDouble();
      }
      return x < drop ? Fault.DROP : x < drop + delay ? Fault.DELAY : Fault.PASS;
    };
  }

  /** The same fate for every answer. */
  static Supplier<Fault> always(Fault fault) {
    return () -> fault;
  }

  /** These fates in order, then {@link Fault#PASS} for the rest. */
  static Supplier<Fault> script(Fault... script) {
    AtomicInteger next = new AtomicInteger();
    return () -> {
      int i = next.getAndIncrement();
      return i < script.length ? script[i] : Fault.PASS;
    };
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  /** Requests the upstream answered (whatever then became of the answer). */
  int forwarded() {
    return forwarded.get();
  }

  int passed() {
    return passed.get();
  }

  int dropped() {
    return dropped.get();
  }

  int delayed() {
    return delayed.get();
  }

  /** The {@code Idempotency-Key} of every forwarded request, in arrival order. */
  List<String> keys() {
    return new ArrayList<>(keys);
  }

  /** The upstream's status for every forwarded request. */
  List<Integer> upstreamStatuses() {
    return new ArrayList<>(upstreamStatuses);
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
    workers.shutdownNow();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        workers.execute(() -> serve(client));
      } catch (IOException e) {
        if (!server.isClosed()) {
          System.out.println("[fault-proxy] accept failed: " + e);
        }
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      InputStream in = new BufferedInputStream(client.getInputStream());
      List<String> head = readHead(in);
      if (head.isEmpty()) {
        return;
      }
      StringBuilder request = new StringBuilder(head.get(0)).append("\r\n");
      long length = 0;
      String key = null;
      for (String line : head.subList(1, head.size())) {
        int colon = line.indexOf(':');
        String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
        String value = line.substring(colon + 1).trim();
        if (name.equals("transfer-encoding")) {
          throw new IOException("chunked request bodies are not supported by this test proxy");
        }
        if (name.equals("content-length")) {
          length = Long.parseLong(value);
        }
        if (name.equals("idempotency-key")) {
          key = value;
        }
        if (!HOP_BY_HOP.contains(name)) {
          request.append(line).append("\r\n");
        }
      }
      request.append("Connection: close\r\n\r\n");
      byte[] body = in.readNBytes((int) length);

      byte[] answer;
      try (Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort)) {
        OutputStream out = upstream.getOutputStream();
        out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
        // The upstream closes after its answer (Connection: close), so read to the end.
        answer = upstream.getInputStream().readAllBytes();
      }
      forwarded.incrementAndGet();
      if (key != null) {
        keys.add(key);
      }
      upstreamStatuses.add(status(answer));

      switch (faults.get()) {
        case DROP -> {
          dropped.incrementAndGet();
          // Close without a byte: the request was executed, its answer is lost.
        }
        case DELAY -> {
          delayed.incrementAndGet();
          Thread.sleep(delay.toMillis());
          write(client, answer);
        }
        case PASS -> {
          passed.incrementAndGet();
          write(client, answer);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException | RuntimeException e) {
      if (!(e instanceof SocketException)) {
        System.out.println("[fault-proxy] " + e);
      }
    }
  }

  private static void write(Socket client, byte[] answer) {
    try {
      client.getOutputStream().write(answer);
      client.getOutputStream().flush();
    } catch (IOException e) {
      // The client gave up first (a delayed answer): expected.
    }
  }

  private static int status(byte[] answer) {
    String text = new String(answer, 0, Math.min(answer.length, 16), StandardCharsets.ISO_8859_1);
    String[] parts = text.split(" ");
    try {
      return parts.length > 1 ? Integer.parseInt(parts[1].trim()) : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The request line and header lines, up to the blank line; empty if the client sent nothing. */
  private static List<String> readHead(InputStream in) throws IOException {
    List<String> lines = new ArrayList<>();
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int previous = -1;
    int b;
    while ((b = in.read()) >= 0) {
      if (b == '\n' && previous == '\r') {
        byte[] bytes = line.toByteArray();
        String text = new String(bytes, 0, bytes.length - 1, StandardCharsets.ISO_8859_1);
        if (text.isEmpty()) {
          return lines;
        }
        lines.add(text);
        line.reset();
      } else {
        line.write(b);
      }
      previous = b;
    }
    if (!lines.isEmpty()) {
      throw new IOException("the client closed the connection in the middle of a request head");
    }
    return lines;
  }
}
