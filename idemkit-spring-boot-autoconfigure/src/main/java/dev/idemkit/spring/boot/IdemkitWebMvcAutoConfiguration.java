package dev.idemkit.spring.boot;

import dev.idemkit.Idempotency;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.web.servlet.DispatcherServlet;
import tools.jackson.databind.json.JsonMapper;

/** {@link Idempotent} on Spring MVC handler methods. */
@AutoConfiguration(
    after = IdemkitAutoConfiguration.class,
    afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({DispatcherServlet.class, Advisor.class, JsonMapper.class})
@ConditionalOnBean(Idempotency.class)
public class IdemkitWebMvcAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public IdempotencyTenantResolver idempotencyTenantResolver() {
    return IdempotencyTenantResolver.principalName();
  }

  @Bean
  @ConditionalOnMissingBean
  public RequestFingerprinter idemkitRequestFingerprinter(ObjectProvider<JsonMapper> mapper) {
    return new RequestFingerprinter(mapper.getIfAvailable(JsonMapper::new));
  }

  @Bean
  @ConditionalOnMissingBean
  public IdempotentMethodInterceptor idempotentMethodInterceptor(
      Idempotency idempotency,
      IdemkitProperties properties,
      IdempotencyTenantResolver tenants,
      RequestFingerprinter fingerprinter,
      IssuedKeys issuedKeys,
      ObjectProvider<JsonMapper> mapper) {
    return new IdempotentMethodInterceptor(
        idempotency,
        properties,
        tenants,
        fingerprinter,
        issuedKeys,
        mapper.getIfAvailable(JsonMapper::new));
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
