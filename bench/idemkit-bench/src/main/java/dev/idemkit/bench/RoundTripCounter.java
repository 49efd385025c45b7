package dev.idemkit.bench;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.concurrent.atomic.LongAdder;
import javax.net.SocketFactory;

/**
 * Counts the round trips of every PostgreSQL connection made with it: the driver's {@code
 * socketFactory} ({@code ?socketFactory=dev.idemkit.bench.RoundTripCounter} in the JDBC URL). A
 * round trip is the client sending, then reading: each read that follows a write on the same
 * connection counts one, however many messages the write carried (a statement and a {@code COMMIT}
 * sent together are one) and however many reads the answer takes. Nothing is parsed or delayed; the
 * counting costs an increment per socket read.
 */
public final class RoundTripCounter extends SocketFactory {

  private static final LongAdder ROUND_TRIPS = new LongAdder();

  /** Round trips counted so far on every connection of this JVM. */
  static long count() {
    return ROUND_TRIPS.sum();
  }

  @Override
  public Socket createSocket() {
    return new CountingSocket();
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    Socket s = new CountingSocket();
    s.connect(new java.net.InetSocketAddress(host, port));
    return s;
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
      throws IOException {
    Socket s = new CountingSocket();
    s.bind(new java.net.InetSocketAddress(localHost, localPort));
    s.connect(new java.net.InetSocketAddress(host, port));
    return s;
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    Socket s = new CountingSocket();
    s.connect(new java.net.InetSocketAddress(host, port));
    return s;
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
      throws IOException {
    Socket s = new CountingSocket();
    s.bind(new java.net.InetSocketAddress(localAddress, localPort));
    s.connect(new java.net.InetSocketAddress(address, port));
    return s;
  }

  /** A plain socket whose streams note writes and count the first read after them. */
  private static final class CountingSocket extends Socket {
    /** Written since the last read: the next read ends a round trip. One connection, one thread. */
    private boolean sent;

    private InputStream in;
    private OutputStream out;

    @Override
    public synchronized InputStream getInputStream() throws IOException {
      if (in == null) {
        in =
            new FilterInputStream(super.getInputStream()) {
              @Override
              public int read() throws IOException {
                answered();
                return super.read();
              }

              @Override
              public int read(byte[] b, int off, int len) throws IOException {
                answered();
                return super.read(b, off, len);
              }
            };
      }
      return in;
    }

    @Override
    public synchronized OutputStream getOutputStream() throws IOException {
      if (out == null) {
        out =
            new FilterOutputStream(super.getOutputStream()) {
              @Override
              public void write(int b) throws IOException {
                sent = true;
                super.out.write(b);
              }

              @Override
              public void write(byte[] b, int off, int len) throws IOException {
                sent = true;
                super.out.write(b, off, len);
              }
            };
      }
      return out;
    }

    private void answered() {
      if (sent) {
        sent = false;
        ROUND_TRIPS.increment();
      }
    }
  }
}
