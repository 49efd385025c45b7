package dev.idemkit.spring.boot;

import dev.idemkit.FingerprintRecipes;
import dev.idemkit.Idempotency;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.http.ResponseEntity;
import org.springframework.web.servlet.DispatcherServlet;
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

  @Bean
  @ConditionalOnMissingBean
  public IdempotentMethodInterceptor idempotentMethodInterceptor(
      Idempotency idempotency,
      IdemkitProperties properties,
      IdempotencyTenantResolver tenants,
      RequestFingerprinter fingerprinter,
      ObjectProvider<IssuedKeys> issuedKeys,
      ObjectProvider<JsonMapper> mapper,
      Environment environment) {
    return new IdempotentMethodInterceptor(
        idempotency,
        properties,
        tenants,
        fingerprinter,
        issuedKeys.getIfAvailable(
            () -> IdemkitAutoConfiguration.issuedKeys(properties, environment)),
        mapper.getIfAvailable(JsonMapper::new));
  }

  /**
   * Fails start-up, naming the method, if an {@link Idempotent} handler does not return a {@code
   * ResponseEntity}: the stored answer is replayed as one, status and headers included.
   */
  @Bean
  public static SmartInitializingSingleton idempotentHandlerCheck(
      ObjectProvider<RequestMappingHandlerMapping> mappings) {
    return () ->
        mappings
            .orderedStream()
            .flatMap(m -> m.getHandlerMethods().values().stream())
            .filter(h -> h.hasMethodAnnotation(Idempotent.class))
            .filter(h -> !ResponseEntity.class.isAssignableFrom(h.getMethod().getReturnType()))
            .findFirst()
            .ifPresent(
                h -> {
                  throw new IllegalStateException(
                      "@Idempotent handler "
                          + h.getMethod()
                          + " must return ResponseEntity<...>: Idempotent answers are replayed"
                          + " as ResponseEntity, status and headers included.");
                });
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
