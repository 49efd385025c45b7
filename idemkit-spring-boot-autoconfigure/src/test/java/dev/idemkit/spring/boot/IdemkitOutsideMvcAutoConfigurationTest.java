package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.PostMapping;

/**
 * {@link Idempotent} is applied to Spring MVC handlers in a servlet application only: in a reactive
 * application, or one that is not a web application, the start fails naming the method, instead of
 * the method running on every retry as if it were not idempotent.
 */
class IdemkitOutsideMvcAutoConfigurationTest {

  private static final AutoConfigurations CHECK =
      AutoConfigurations.of(IdemkitOutsideMvcAutoConfiguration.class);

  @Controller
  static class ReactiveController {
    @PostMapping("/v1/payments")
    @Idempotent(operation = "create_payment")
    public String create(String body) {
      return body;
    }
  }

  static class PlainService {
    public String unmarked(String body) {
      return body;
    }
  }

  @Test
  void aReactiveApplicationWithAnIdempotentHandlerDoesNotStart() {
    new ReactiveWebApplicationContextRunner()
        .withConfiguration(CHECK)
        .withUserConfiguration(ReactiveController.class)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining(ReactiveController.class.getName() + ".create(")
                  .hasMessageContaining("would do nothing in a reactive (WebFlux) application")
                  .hasMessageContaining("inject Idempotency");
            });
  }

  @Test
  void anApplicationThatIsNotAWebApplicationWithAnIdempotentMethodDoesNotStart() {
    new ApplicationContextRunner()
        .withConfiguration(CHECK)
        .withUserConfiguration(ReactiveController.class)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("would do nothing in an application that is not a web");
            });
  }

  @Test
  void withoutIdempotentMethodsOrInAServletApplicationItStaysOutOfTheWay() {
    new ReactiveWebApplicationContextRunner()
        .withConfiguration(CHECK)
        .withUserConfiguration(PlainService.class)
        .run(context -> assertThat(context).hasNotFailed());
    new WebApplicationContextRunner()
        .withConfiguration(CHECK)
        .withUserConfiguration(ReactiveController.class)
        .run(context -> assertThat(context).hasNotFailed());
    new ApplicationContextRunner()
        .withConfiguration(CHECK)
        .withPropertyValues("idemkit.enabled=false")
        .withUserConfiguration(ReactiveController.class)
        .run(context -> assertThat(context).hasNotFailed());
  }
}
