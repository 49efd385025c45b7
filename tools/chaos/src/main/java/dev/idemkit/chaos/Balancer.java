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
import java.util.function.IntSupplier;

/**
 * A loopback TCP load balancer: each new client connection goes to the next instance in turn, and
 * to the one after when an instance refuses (it was killed). A paused instance still accepts, so
 * its clients time out and retry, like clients behind a real balancer that cannot tell.
 */
final class Balancer implements AutoCloseable {

  private final ServerSocket server;
  private final List<IntSupplier> backends;
  private final AtomicInteger next = new AtomicInteger();
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> daemon(r, "chaos-lb"));

  Balancer(List<IntSupplier> backends) throws IOException {
    this.backends = backends;
    server = new ServerSocket();
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    pool.execute(this::accept);
  }

  int port() {
    return server.getLocalPort();
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
    int start = Math.floorMod(next.getAndIncrement(), backends.size());
    for (int i = 0; i < backends.size(); i++) {
      int port = backends.get((start + i) % backends.size()).getAsInt();
      Socket upstream = new Socket();
      try {
        upstream.setTcpNoDelay(true);
        client.setTcpNoDelay(true);
        upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
        pool.execute(() -> pipe(client, upstream));
        pool.execute(() -> pipe(upstream, client));
        return;
      } catch (IOException refused) {
        closeQuietly(upstream);
      }
    }
    closeQuietly(client);
  }

  private static void pipe(Socket from, Socket to) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException ended) {
      // one side closed or reset; close both
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
    server.close();
    pool.shutdownNow();
  }
}
