package dev.idemkit.spring.boot;

import dev.idemkit.FingerprintRecipes;
import dev.idemkit.Idempotency;
import java.util.List;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.json.JsonMapper;

/** {@link Idempotent} on Spring MVC handler methods. */
@AutoConfiguration(
    after = IdemkitAutoConfiguration.class,
    afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({DispatcherServlet.class, Advisor.class, JsonMapper.class})
@ConditionalOnBean(Idempotency.class)
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitWebMvcAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public IdempotencyTenantResolver idempotencyTenantResolver() {
    return IdempotencyTenantResolver.principalName();
  }

  @Bean
  @ConditionalOnMissingBean
  public RequestFingerprinter idemkitRequestFingerprinter(
      ObjectProvider<JsonMapper> mapper, ObjectProvider<FingerprintRecipes> recipes) {
    return new RequestFingerprinter(
        mapper.getIfAvailable(JsonMapper::new), recipes.getIfAvailable(FingerprintRecipes::plain));
  }

  @Bean
  @ConditionalOnMissingBean
  public StoredResponses idemkitStoredResponses(ObjectProvider<JsonMapper> mapper) {
    return new StoredResponses(mapper.getIfAvailable(JsonMapper::new));
  }

  /**
   * The pause before a quota's refusal ({@code idemkit.quota.refusal-pause}), for the layer's
   * refusals and the application's own before a request reaches it.
   */
  @Bean
  @ConditionalOnMissingBean
  public RefusalPause idemkitRefusalPause(IdemkitProperties properties) {
    return RefusalPause.of(properties.getQuota());
  }

  @Bean
  @ConditionalOnMissingBean
  public IdempotentMethodInterceptor idempotentMethodInterceptor(
      Idempotency idempotency,
      IdemkitProperties properties,
      IdempotencyTenantResolver tenants,
      RequestFingerprinter fingerprinter,
      ObjectProvider<IssuedKeys> issuedKeys,
      ObjectProvider<JsonMapper> mapper,
      Environment environment,
      RefusalPause refusalPause) {
    return new IdempotentMethodInterceptor(
        idempotency,
        properties,
        tenants,
        fingerprinter,
        issuedKeys.getIfAvailable(
            () -> IdemkitIssuedKeysConfiguration.issuedKeys(properties, environment)),
        mapper.getIfAvailable(JsonMapper::new),
        refusalPause);
  }

  /**
   * Fails start-up, naming each method and what is wrong with it ({@link IdempotentHandlerCheck}),
   * if an {@link Idempotent} handler does not return a {@code ResponseEntity} (the stored answer is
   * replayed as one, status and headers included) or, phased, the {@code PhasedOperation} to run,
   * has a blank operation or an unreadable window, or takes an input the request's fingerprint
   * would not hold.
   */
  @Bean
  public static SmartInitializingSingleton idempotentHandlerCheck(
      ObjectProvider<RequestMappingHandlerMapping> mappings,
      ObjectProvider<JsonMapper> mapper,
      ObjectProvider<IdemkitProperties> properties) {
    return () -> {
      IdempotentHandlerCheck check =
          new IdempotentHandlerCheck(
              mapper.getIfAvailable(JsonMapper::new),
              properties.getIfAvailable(IdemkitProperties::new).getApiVersionHeader());
      List<String> problems =
          mappings
              .orderedStream()
              .flatMap(m -> m.getHandlerMethods().values().stream())
              .filter(h -> h.hasMethodAnnotation(Idempotent.class))
              .distinct()
              .flatMap(
                  h ->
                      check.problems(h).stream()
                          .map(p -> "@Idempotent handler " + h.getMethod() + " " + p))
              .toList();
      if (!problems.isEmpty()) {
        throw new IllegalStateException(String.join(";\n", problems) + ".");
      }
    };
  }

  /**
   * Fails start-up if {@link Idempotent} marks a method of a bean that is not a controller: the
   * annotation makes a Spring MVC handler idempotent, and anywhere else it would turn the method's
   * result into an HTTP answer or do nothing. Code that is not a controller calls {@link
   * Idempotency} itself.
   */
  @Bean
  public static BeanPostProcessor idempotentOutsideControllersCheck() {
    return new BeanPostProcessor() {
      @Override
      public Object postProcessBeforeInitialization(Object bean, String beanName) {
        Class<?> type = ClassUtils.getUserClass(bean);
        // Framework beans (most of a context) carry no @Idempotent: not walked method by method.
        if (type.getName().startsWith("org.springframework.")
            || !AnnotationUtils.isCandidateClass(type, Idempotent.class)
            || AnnotatedElementUtils.hasAnnotation(type, Controller.class)) {
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
                      + "'), which is not a controller: @Idempotent makes a Spring MVC handler"
                      + " method idempotent. Elsewhere, inject Idempotency and call"
                      + " execute(...) with the request's key and fingerprint.");
            },
            m -> AnnotatedElementUtils.hasAnnotation(m, Idempotent.class));
        return bean;
      }
    };
  }

  /**
   * Writes the answers of {@code @Idempotent(phased = true)} handlers, which return the operation
   * to run ({@link PhasedOperationReturnValueHandler}).
   */
  @Bean
  public static BeanPostProcessor idempotentPhasedAnswers() {
    return new BeanPostProcessor() {
      @Override
      public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof RequestMappingHandlerAdapter adapter) {
          PhasedOperationReturnValueHandler.registerFirst(adapter);
        }
        return bean;
      }
    };
  }

  /** Applies the interceptor to every method annotated {@link Idempotent}. */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  public static Advisor idempotentAdvisor(ObjectProvider<IdempotentMethodInterceptor> interceptor) {
    DefaultPointcutAdvisor advisor =
        new DefaultPointcutAdvisor(
            AnnotationMatchingPointcut.forMethodAnnotation(Idempotent.class),
            (org.aopalliance.intercept.MethodInterceptor)
                invocation -> interceptor.getObject().invoke(invocation));
    return advisor;
  }
}
