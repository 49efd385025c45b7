package dev.idemkit.spring.boot;

import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnNotWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Fails start-up where {@link Idempotent} would do nothing: it is applied to Spring MVC handlers in
 * a servlet web application only ({@link IdemkitWebMvcAutoConfiguration}). In a reactive (WebFlux)
 * application, or one that is not a web application, an annotated method would run on every retry
 * as if it were not idempotent, silently; such code calls {@link dev.idemkit.Idempotency} itself.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
public class IdemkitOutsideMvcAutoConfiguration {

  /** A reactive web application: no handler interceptor applies {@link Idempotent}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  static class Reactive {
    @Bean
    static BeanPostProcessor idempotentInAReactiveApplicationCheck() {
      return refusing("a reactive (WebFlux) application");
    }
  }

  /** Not a web application: there are no handlers. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnNotWebApplication
  static class NotWeb {
    @Bean
    static BeanPostProcessor idempotentOutsideAWebApplicationCheck() {
      return refusing("an application that is not a web application");
    }
  }

  private static BeanPostProcessor refusing(String application) {
    return new BeanPostProcessor() {
      @Override
      public Object postProcessBeforeInitialization(Object bean, String beanName) {
        Class<?> type = ClassUtils.getUserClass(bean);
        // Framework beans (most of a context) carry no @Idempotent: not walked method by method.
        if (type.getName().startsWith("org.springframework.")
            || !AnnotationUtils.isCandidateClass(type, Idempotent.class)) {
          return bean;
        }
        ReflectionUtils.doWithMethods(
            type,
            m -> {
              throw new BeanInitializationException(
                  "@Idempotent on "
                      + m
                      + " (bean '"
                      + beanName
                      + "') would do nothing in "
                      + application
                      + ": it makes Spring MVC handler methods idempotent, in a servlet web"
                      + " application (spring-boot-starter-webmvc). Here, inject Idempotency and"
                      + " call execute(...) with the request's key and fingerprint.");
            },
            m -> AnnotatedElementUtils.hasAnnotation(m, Idempotent.class));
        return bean;
      }
    };
  }
}
