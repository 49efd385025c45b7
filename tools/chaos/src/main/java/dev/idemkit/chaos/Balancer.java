package dev.idemkit.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A loopback TCP forwarder: each new connection goes to the next backend in turn, and to the one
 * after when a backend refuses (it was killed). It stands between the clients and the instances (a
 * paused instance still accepts, so its clients time out and retry, like clients behind a real
 * balancer that cannot tell), and between the instances and each database server, where the nemesis
 * can {@link #cut} it: a network that stops carrying packets without closing anything.
 */
final class Balancer implements AutoCloseable {

  private final ServerSocket server;
  private final List<Supplier<InetSocketAddress>> backends;
  private final AtomicInteger next = new AtomicInteger();
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> daemon(r, "chaos-lb"));
  private final Object gate = new Object();
  private boolean cut;

  Balancer(List<Supplier<InetSocketAddress>> backends) throws IOException {
    this.backends = backends;
    server = new ServerSocket();
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    pool.execute(this::accept);
  }

  /** Backends on this machine's loopback, by port. */
  static Supplier<InetSocketAddress> loopback(int port) {
    return () -> new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
  }

  int port() {
    return server.getLocalPort();
  }

  /**
   * Stops carrying bytes, both ways, on every connection, and holds new connections unanswered:
   * nothing is closed, so each side waits as on a cut network, until {@link #heal}.
   */
  void cut() {
    synchronized (gate) {
      cut = true;
    }
  }

  /** Carries bytes again; what was held goes on its way. */
  void heal() {
    synchronized (gate) {
      cut = false;
      gate.notifyAll();
    }
  }

  private void awaitCarrying() throws InterruptedException {
    synchronized (gate) {
      while (cut) {
        gate.wait();
      }
    }
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        pool.execute(() -> connect(client));
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void connect(Socket client) {
    try {
      awaitCarrying();
    } catch (InterruptedException closing) {
      closeQuietly(client);
      return;
    }
    int start = Math.floorMod(next.getAndIncrement(), backends.size());
    for (int i = 0; i < backends.size(); i++) {
      InetSocketAddress backend = backends.get((start + i) % backends.size()).get();
      Socket upstream = new Socket();
      try {
        upstream.setTcpNoDelay(true);
        client.setTcpNoDelay(true);
        upstream.connect(backend, 1000);
        pool.execute(() -> pipe(client, upstream));
        pool.execute(() -> pipe(upstream, client));
        return;
      } catch (IOException refused) {
        closeQuietly(upstream);
      }
    }
    closeQuietly(client);
  }

  private void pipe(Socket from, Socket to) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        awaitCarrying();
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException | InterruptedException ended) {
      // one side closed or reset, or the forwarder closes; close both
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  @Override
  public void close() throws IOException {
    heal();
    server.close();
    pool.shutdownNow();
  }
}
