package dev.idemkit.internal;

import dev.idemkit.PhaseData;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/** {@link PhaseData#of(Class)}: a record's components as stored values. Not API. */
public final class RecordPhaseData<R extends Record> implements PhaseData<R> {

  private static final Set<Class<?>> PLAIN =
      Set.of(
          String.class,
          UUID.class,
          Long.class,
          long.class,
          Integer.class,
          int.class,
          Boolean.class,
          boolean.class,
          BigDecimal.class,
          Instant.class,
          Duration.class);

  /**
   * One instance per record type: a phased operation is typically built per request, and reading a
   * record's components and constructor by reflection costs more than the request's own phase data.
   * An instance is immutable, so every operation of that type can share it.
   */
  private static final ClassValue<RecordPhaseData<?>> BY_TYPE =
      new ClassValue<>() {
        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        protected RecordPhaseData<?> computeValue(Class<?> type) {
          return new RecordPhaseData(type.asSubclass(Record.class));
        }
      };

  private final Class<R> type;
  private final RecordComponent[] components;
  private final Constructor<R> constructor;

  /** The phase data of record type {@code type}, made once per type. */
  @SuppressWarnings("unchecked")
  public static <R extends Record> RecordPhaseData<R> of(Class<R> type) {
    Objects.requireNonNull(type, "type");
    if (!type.isRecord()) {
      throw new IllegalArgumentException(type.getName() + " is not a record");
    }
    return (RecordPhaseData<R>) BY_TYPE.get(type);
  }

  private RecordPhaseData(Class<R> type) {
    this.type = Objects.requireNonNull(type, "type");
    this.components = type.getRecordComponents();
    for (RecordComponent c : components) {
      if (!PLAIN.contains(c.getType()) && !c.getType().isEnum()) {
        throw new IllegalArgumentException(
            "Phase data "
                + type.getSimpleName()
                + "."
                + c.getName()
                + " is a "
                + c.getType().getSimpleName()
                + "; phase data keeps small values only: String, UUID, long, int, boolean,"
                + " BigDecimal, Instant, Duration or an enum");
      }
      if (c.getName().startsWith("idemkit")) {
        throw new IllegalArgumentException("Component names starting with idemkit are reserved");
      }
      c.getAccessor().setAccessible(true);
    }
    try {
      this.constructor =
          type.getDeclaredConstructor(
              Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
      constructor.setAccessible(true);
    } catch (NoSuchMethodException e) {
      throw new IllegalArgumentException(type + " has no canonical constructor", e);
    }
  }

  @Override
  public Map<String, String> write(R data) {
    Map<String, String> values = new LinkedHashMap<>();
    for (RecordComponent c : components) {
      Object value;
      try {
        value = c.getAccessor().invoke(data);
      } catch (IllegalAccessException | InvocationTargetException e) {
        throw new IllegalStateException("Could not read " + type.getSimpleName() + "." + c, e);
      }
      if (value != null) {
        values.put(c.getName(), value instanceof Enum<?> e ? e.name() : value.toString());
      }
    }
    return values;
  }

  @Override
  public R read(Map<String, String> values) {
    Object[] args = new Object[components.length];
    for (int i = 0; i < components.length; i++) {
      RecordComponent c = components[i];
      String text = values.get(c.getName());
      try {
        args[i] = text == null ? absent(c.getType()) : parse(c.getType(), text);
      } catch (RuntimeException e) {
        throw new IllegalStateException(
            "Stored phase data " + c.getName() + "=" + text + " is not a " + c.getType(), e);
      }
    }
    try {
      return constructor.newInstance(args);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException(
          "Could not make " + type.getSimpleName() + " from stored values " + values, e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Could not make " + type.getSimpleName(), e);
    }
  }

  private static Object absent(Class<?> type) {
    if (type == long.class) {
      return 0L;
    }
    if (type == int.class) {
      return 0;
    }
    if (type == boolean.class) {
      return false;
    }
    return null;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Object parse(Class<?> type, String text) {
    if (type.isEnum()) {
      return Enum.valueOf((Class<? extends Enum>) type, text);
    }
    Function<String, Object> parser =
        switch (type.getName()) {
          case "java.lang.String" -> s -> s;
          case "java.util.UUID" -> UUID::fromString;
          case "long", "java.lang.Long" -> Long::valueOf;
          case "int", "java.lang.Integer" -> Integer::valueOf;
          case "boolean", "java.lang.Boolean" -> Boolean::valueOf;
          case "java.math.BigDecimal" -> BigDecimal::new;
          case "java.time.Instant" -> Instant::parse;
          case "java.time.Duration" -> Duration::parse;
          default -> throw new IllegalArgumentException("unsupported " + type);
        };
    return parser.apply(text);
  }
}
