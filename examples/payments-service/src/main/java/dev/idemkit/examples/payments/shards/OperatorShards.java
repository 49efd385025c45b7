package dev.idemkit.examples.payments.shards;

import dev.idemkit.spring.boot.ErrorCode;
import dev.idemkit.spring.boot.Problems;
import dev.idemkit.spring.boot.TenantDirectory;
import dev.idemkit.spring.boot.TenantShards;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.stereotype.Component;
import org.springframework.web.ErrorResponseException;

/**
 * Where an operator's work runs on shards: a request is bound to the shard of its caller, and an
 * operator's is neither a tenant's nor every shard. Work on one tenant's data (its erasure, its
 * data keys) runs on that tenant's shard ({@link #onTenant}); work on the whole service's (a master
 * key's data keys, the events awaiting an operator) runs on each shard ({@link #onEach}). On one
 * database the work runs as it is, once.
 */
@Component
public class OperatorShards {

  /** Work on the bound shard's database. */
  @FunctionalInterface
  public interface Work<T> {
    T run() throws SQLException;
  }

  private record Sharded(TenantShards shards, TenantDirectory directory) {}

  private final Optional<Sharded> sharded;

  public OperatorShards(
      ObjectProvider<TenantShards> shards, ObjectProvider<TenantDirectory> directory) {
    this.sharded =
        Optional.ofNullable(shards.getIfAvailable())
            .map(all -> new Sharded(all, directory.getObject()));
  }

  /**
   * Runs {@code work} with {@code tenant}'s shard bound, and answers what it answers. While the
   * tenant moves between shards it is refused with 503 {@code TENANT_MOVING} and {@code
   * Retry-After: 1}, nothing done: the move's fence would refuse its writes on the old shard, and
   * the new one does not hold the tenant's rows yet.
   */
  public <T> T onTenant(String tenant, Work<T> work) throws SQLException {
    if (sharded.isEmpty()) {
      return work.run();
    }
    TenantDirectory.Placement placement = sharded.get().directory().placement(tenant);
    if (placement.state() == TenantDirectory.State.MOVING) {
      throw moving(tenant);
    }
    return on(placement.shard(), work);
  }

  /**
   * Runs {@code work} on each shard of this instance's region in turn (once on one database): what
   * each answered.
   */
  public <T> List<T> onEach(Work<T> work) throws SQLException {
    List<T> answers = new ArrayList<>(); // null answers too: "not found here"
    if (sharded.isEmpty()) {
      answers.add(work.run());
      return answers;
    }
    for (String shard : sharded.get().shards().local()) {
      answers.add(on(shard, work));
    }
    return answers;
  }

  /** The lists {@code list} answers on each shard ({@link #onEach}), one after the other. */
  public <T> List<T> listOnEach(Work<List<T>> list) throws SQLException {
    return onEach(list).stream().flatMap(List::stream).toList();
  }

  private <T> T on(String shard, Work<T> work) throws SQLException {
    try {
      return sharded.get().shards().on(shard, work::run);
    } catch (SQLException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e); // work throws nothing else checked
    }
  }

  private static ErrorResponseException moving(String tenant) {
    ProblemDetail problem =
        ProblemDetail.forStatusAndDetail(
            HttpStatus.SERVICE_UNAVAILABLE,
            "Tenant "
                + tenant
                + "'s data is moving between databases; nothing was done. Retry after"
                + " Retry-After seconds.");
    problem.setType(Problems.type(ErrorCode.TENANT_MOVING.code()));
    problem.setTitle("Tenant moving");
    problem.setProperty("errorCode", ErrorCode.TENANT_MOVING.code());
    ErrorResponseException refused =
        new ErrorResponseException(HttpStatus.SERVICE_UNAVAILABLE, problem, null);
    refused.getHeaders().set(HttpHeaders.RETRY_AFTER, "1");
    return refused;
  }
}
