package dev.idemkit.conformance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A one-shot loopback proxy that loses an answer in transit: it forwards one request to the server,
 * reads the server's whole answer (so the server has finished and committed), and then resets the
 * client's connection without passing a byte on. The client sees what a client sees when a network
 * drops a response; the checker keeps the answer it never got, to compare with the retry's.
 */
final class LossyProxy implements AutoCloseable {

  private final ServerSocket server;
  private final URI target;
  private final Duration timeout;
  private final CompletableFuture<RawHttp.Response> swallowed = new CompletableFuture<>();

  LossyProxy(URI target, Duration timeout) throws IOException {
    this.target = target;
    this.timeout = timeout;
    this.server = new ServerSocket();
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
    Thread thread = new Thread(this::serveOnce, "idemkit-conformance-lossy-proxy");
    thread.setDaemon(true);
    thread.start();
  }

  /** The proxy's address, to send the request to instead of the server's. */
  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  /** The answer the server gave and the client never received. */
  RawHttp.Response swallowedAnswer() throws Exception {
    return swallowed.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void serveOnce() {
    try (Socket client = server.accept()) {
      client.setSoTimeout((int) timeout.toMillis());
      byte[] request = readRequest(client.getInputStream());
      try (Socket upstream = RawHttp.open(target, timeout)) {
        long start = System.nanoTime();
        upstream.getOutputStream().write(request);
        upstream.getOutputStream().flush();
        swallowed.complete(RawHttp.read(upstream.getInputStream(), start));
      }
      // Lose the answer: a reset, not a clean end, like a connection that broke.
      client.setSoLinger(true, 0);
    } catch (IOException | RuntimeException e) {
      swallowed.completeExceptionally(e);
    }
  }

  private static byte[] readRequest(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] end = "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
    int headerEnd;
    while ((headerEnd = RawHttp.indexOf(out.toByteArray(), end, 0)) < 0) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the client closed before a whole request");
      }
      out.write(b);
    }
    String head = out.toString(StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT);
    int length = 0;
    for (String line : head.split("\r\n")) {
      if (line.startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    out.write(in.readNBytes(length));
    return out.toByteArray();
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
