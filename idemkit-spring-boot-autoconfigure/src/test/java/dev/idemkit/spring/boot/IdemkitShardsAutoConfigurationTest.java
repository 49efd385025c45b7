package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Tenants on shards are off unless a shard is named: then nothing of them is in the context. */
class IdemkitShardsAutoConfigurationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemkitShardsAutoConfiguration.class));

  @Test
  void withoutShardsThereIsNoRoutingNoDirectoryAndNoWorkerLanes() {
    runner
        .withPropertyValues("idemkit.shards-directory=a")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(DataSource.class);
              assertThat(context).doesNotHaveBean(TenantDirectory.class);
              assertThat(context).doesNotHaveBean("idemkitWorkersPerShard");
            });
  }

  @Test
  void aShardWithoutAUrlStopsTheStartSayingSo() {
    runner
        .withPropertyValues("idemkit.shards.a.username=app")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("idemkit.shards.a.url is missing"));
  }
}
