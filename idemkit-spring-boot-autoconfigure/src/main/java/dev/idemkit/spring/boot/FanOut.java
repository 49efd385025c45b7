package dev.idemkit.spring.boot;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.List;

/**
 * One listener that hands every call to each of the application's listener beans of its type, in
 * their order: the engine's {@code IdempotencyListener}, the outbox's and the Kafka consumers'
 * listeners (meters, logs). A proxy rather than a class per listener type that repeats each method,
 * so a method added to a listener type is passed on with no code here. A listener that throws stops
 * the call there, as a direct call would.
 */
final class FanOut {

  private FanOut() {}

  /**
   * @param type a listener interface whose methods return nothing
   * @param none the listener that hears nothing, for when there is no bean
   */
  static <L> L of(Class<L> type, List<? extends L> listeners, L none) {
    for (Method method : type.getMethods()) {
      if (!Modifier.isStatic(method.getModifiers()) && method.getReturnType() != void.class) {
        throw new IllegalArgumentException(method + " returns a value: it cannot be fanned out");
      }
    }
    if (listeners.isEmpty()) {
      return none;
    }
    if (listeners.size() == 1) {
      return listeners.get(0);
    }
    List<? extends L> each = List.copyOf(listeners);
    Object fanOut =
        Proxy.newProxyInstance(
            type.getClassLoader(),
            new Class<?>[] {type},
            (proxy, method, args) -> {
              if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                  case "equals" -> proxy == args[0];
                  case "hashCode" -> System.identityHashCode(proxy);
                  default -> type.getSimpleName() + " to each of " + each;
                };
              }
              for (L listener : each) {
                try {
                  method.invoke(listener, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
              }
              return null;
            });
    return type.cast(fanOut);
  }
}
