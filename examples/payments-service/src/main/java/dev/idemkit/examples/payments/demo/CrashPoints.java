package dev.idemkit.examples.payments.demo;

import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Fault injection for the crash tests, off unless {@code payments.faults.kill-at} names a point:
 * the process then kills itself with {@code kill -9} (no shutdown hook, no rollback courtesy, like
 * a power cut) when a payment reaches that point. Points: {@code after-local-payment}, {@code
 * after-request-sent}, {@code after-provider-charged}, {@code after-provider-confirmed}.
 */
@Component
public class CrashPoints {

  private static final Logger log = LoggerFactory.getLogger(CrashPoints.class);

  private final String killAt;

  public CrashPoints(@Value("${payments.faults.kill-at:}") String killAt) {
    this.killAt = killAt;
    if (!killAt.isBlank()) {
      log.warn("Fault injection on: this process kills itself at {}", killAt);
    }
  }

  public void reached(String point) {
    if (!point.equals(killAt)) {
      return;
    }
    long pid = ProcessHandle.current().pid();
    log.warn("Reached {}: kill -9 {}", point, pid);
    try {
      new ProcessBuilder("kill", "-9", String.valueOf(pid)).start().waitFor();
    } catch (IOException e) {
      Runtime.getRuntime().halt(137);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Runtime.getRuntime().halt(137);
  }
}
