package dev.idemkit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.outbox.OutboxListener;
import dev.idemkit.spi.IdempotencyListener;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompositeListenerTest {

  /** A listener method the composite does not pass on is silently lost for every listener bean. */
  @Test
  void everyListenerMethodIsPassedOnToEachListener() throws Exception {
    List<String> missing =
        Arrays.stream(IdempotencyListener.class.getMethods())
            .filter(m -> !m.isSynthetic() && !java.lang.reflect.Modifier.isStatic(m.getModifiers()))
            .filter(m -> !declaredBy(CompositeListener.class, m))
            .map(Method::getName)
            .toList();

    assertThat(missing).isEmpty();
  }

  @Test
  void everyOutboxListenerMethodIsPassedOnToEachListener() {
    List<String> missing =
        Arrays.stream(OutboxListener.class.getMethods())
            .filter(m -> !m.isSynthetic() && !java.lang.reflect.Modifier.isStatic(m.getModifiers()))
            .filter(m -> !declaredBy(CompositeOutboxListener.class, m))
            .map(Method::getName)
            .toList();

    assertThat(missing).isEmpty();
  }

  private static boolean declaredBy(Class<?> type, Method m) {
    try {
      return type.getDeclaredMethod(m.getName(), m.getParameterTypes()).getDeclaringClass() == type;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }
}
