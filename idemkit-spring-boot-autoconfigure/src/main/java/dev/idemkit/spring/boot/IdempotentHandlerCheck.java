package dev.idemkit.spring.boot;

import dev.idemkit.PhasedOperation;
import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TimeZone;
import java.util.TreeSet;
import org.springframework.beans.BeanUtils;
import org.springframework.core.MethodParameter;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.CookieValue;
import org.springframework.web.bind.annotation.MatrixVariable;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.method.HandlerMethod;
import tools.jackson.databind.AnnotationIntrospector;
import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.SerializationConfig;
import tools.jackson.databind.introspect.AnnotatedMember;
import tools.jackson.databind.introspect.BeanPropertyDefinition;
import tools.jackson.databind.introspect.ClassIntrospector;
import tools.jackson.databind.json.JsonMapper;

/**
 * What is wrong with an {@link Idempotent} handler, found at start-up rather than at its first
 * request. Above all: every input the handler takes from the request must be in the request's
 * fingerprint (contract §3, docs/contract.md), or a retry with the same key and another value would
 * be answered with the first answer. The fingerprint holds the operation, the path variables, the
 * API version header ({@code Api-Version}) and the body as Jackson writes it back ({@link
 * RequestFingerprinter}); a query parameter, another header, a cookie or form field, or a body
 * property Jackson reads but does not write is not in it.
 */
final class IdempotentHandlerCheck {

  /** Annotations whose parameter takes a value the fingerprint does not hold. */
  private static final List<Class<? extends Annotation>> UNFINGERPRINTED =
      List.of(
          RequestParam.class,
          RequestHeader.class,
          ModelAttribute.class,
          MatrixVariable.class,
          CookieValue.class,
          RequestPart.class);

  private final JsonMapper mapper;
  private final String apiVersionHeader;

  /**
   * @param apiVersionHeader the header whose value the fingerprint holds ({@code
   *     idemkit.api-version-header})
   */
  IdempotentHandlerCheck(JsonMapper mapper, String apiVersionHeader) {
    this.mapper = mapper;
    this.apiVersionHeader = apiVersionHeader;
  }

  /** One sentence per problem of {@code handler}; empty when it is fine. */
  List<String> problems(HandlerMethod handler) {
    Method method = handler.getMethod();
    Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
    List<String> problems = new ArrayList<>();
    if (idempotent.phased()) {
      if (!PhasedOperation.class.isAssignableFrom(method.getReturnType())) {
        problems.add(
            "is phased and must return the PhasedOperation<...> to run: Idemkit runs its phases"
                + " and answers with the outcome");
      }
      if (!idempotent.required()) {
        problems.add(
            "is phased and its key is optional (required = false): a phased operation runs only"
                + " under a key. Make the key required");
      }
    } else if (!ResponseEntity.class.isAssignableFrom(method.getReturnType())) {
      problems.add(
          "must return ResponseEntity<...>: Idempotent answers are replayed as ResponseEntity,"
              + " status and headers included");
    }
    if (idempotent.operation().isBlank()) {
      problems.add("has a blank operation: name it (e.g. operation = \"create_payment\")");
    }
    if (!idempotent.ttl().isEmpty()) {
      try {
        Duration ttl = Duration.parse(idempotent.ttl());
        if (ttl.isNegative() || ttl.isZero()) {
          problems.add("has ttl \"" + idempotent.ttl() + "\": the window must be positive");
        }
      } catch (DateTimeParseException e) {
        problems.add(
            "has ttl \""
                + idempotent.ttl()
                + "\", which is not an ISO-8601 duration (e.g. \"PT24H\", \"P7D\")");
      }
    }
    if (idempotent.phased() && idempotent.replayedStatuses().length > 0) {
      problems.add(
          "is phased and names replayedStatuses "
              + Arrays.toString(idempotent.replayedStatuses())
              + ", which only a handler that answers itself follows: a phased operation's steps"
              + " decide (an answer a step returns is stored and replayed for the window; a step"
              + " that throws before the first call leaves nothing, and the retry runs again)."
              + " Remove replayedStatuses");
    }
    for (MethodParameter parameter : handler.getMethodParameters()) {
      String unfingerprinted = unfingerprinted(parameter);
      if (unfingerprinted != null) {
        problems.add(
            "takes "
                + unfingerprinted
                + ", which is not in the request's fingerprint: a retry with the same key and"
                + " another value would be answered with the first answer. Take it from the body"
                + " (the command) or the path, or, if it is transport metadata, read it in a"
                + " filter");
      }
      if (parameter.hasParameterAnnotation(RequestBody.class)) {
        Class<?> body = parameter.getParameterType();
        if (!CanonicalCommand.class.isAssignableFrom(body)) {
          for (String property : unwritten(mapper.constructType(body), new HashSet<>(), "")) {
            problems.add(
                "reads body property \""
                    + property
                    + "\" of "
                    + body.getSimpleName()
                    + ", which Jackson does not write back (write-only, ignored on output, or no"
                    + " getter), so it is not in the request's fingerprint: a retry with another"
                    + " value would be answered with the first answer. Make it readable, or"
                    + " implement CanonicalCommand");
          }
        }
      }
    }
    return problems;
  }

  /** How {@code parameter} takes a value the fingerprint does not hold, or null. */
  private String unfingerprinted(MethodParameter parameter) {
    for (Class<? extends Annotation> type : UNFINGERPRINTED) {
      Annotation a = parameter.getParameterAnnotation(type);
      if (a == null) {
        continue;
      }
      if (a instanceof RequestHeader h
          && (apiVersionHeader.equalsIgnoreCase(h.value())
              || apiVersionHeader.equalsIgnoreCase(h.name()))) {
        return null; // the fingerprint holds it
      }
      return "@" + type.getSimpleName() + " " + name(parameter);
    }
    if (parameter.getParameterAnnotations().length == 0) {
      Class<?> type = parameter.getParameterType();
      // An unannotated simple value is bound from a request parameter, like @RequestParam.
      if (BeanUtils.isSimpleValueType(type)
          && type != Locale.class
          && type != TimeZone.class
          && !ZoneId.class.isAssignableFrom(type)) {
        return "request parameter "
            + name(parameter)
            + " (unannotated "
            + type.getSimpleName()
            + ")";
      }
    }
    return null;
  }

  private static String name(MethodParameter parameter) {
    String name = parameter.getParameterName();
    return name != null ? name : "#" + parameter.getParameterIndex();
  }

  /**
   * The properties of {@code type} (and of the beans it holds, by their JSON path) that Jackson
   * reads from a body and does not write back.
   */
  private List<String> unwritten(JavaType type, Set<Class<?>> seen, String prefix) {
    while (type.isContainerType() && type.getContentType() != null) {
      type = type.getContentType();
    }
    Class<?> raw = type.getRawClass();
    if (raw.isPrimitive()
        || raw.isEnum()
        || raw.isArray()
        || raw.getName().startsWith("java.")
        || raw.getName().startsWith("tools.jackson.")
        || BeanUtils.isSimpleValueType(raw)
        || CanonicalCommand.class.isAssignableFrom(raw)
        || !seen.add(raw)) {
      return List.of();
    }
    SerializationConfig sc = mapper.serializationConfig();
    ClassIntrospector si = sc.classIntrospectorInstance().forOperation(sc);
    BeanDescription written =
        si.introspectForSerialization(type, si.introspectClassAnnotations(type));
    DeserializationConfig dc = mapper.deserializationConfig();
    ClassIntrospector di = dc.classIntrospectorInstance().forOperation(dc);
    BeanDescription read =
        di.introspectForDeserialization(type, di.introspectClassAnnotations(type));
    Set<String> out = new TreeSet<>();
    for (BeanPropertyDefinition p : written.findProperties()) {
      if (p.couldSerialize()) {
        out.add(p.getName());
      }
    }
    List<String> missing = new ArrayList<>();
    AnnotationIntrospector ai = dc.getAnnotationIntrospector();
    for (BeanPropertyDefinition p : read.findProperties()) {
      if (!p.couldDeserialize() || ignored(ai, dc, p, raw)) {
        continue;
      }
      if (!out.contains(p.getName())) {
        missing.add(prefix + p.getName());
      } else {
        missing.addAll(unwritten(p.getPrimaryType(), seen, prefix + p.getName() + "."));
      }
    }
    return missing;
  }

  /**
   * Whether Jackson ignores {@code p} on input: marked ignored on any of its members (a record's
   * ignored component keeps only its constructor parameter, which carries no annotation, so its
   * field is asked too).
   */
  private static boolean ignored(
      AnnotationIntrospector ai, DeserializationConfig dc, BeanPropertyDefinition p, Class<?> raw) {
    for (AnnotatedMember m :
        new AnnotatedMember[] {
          p.getField(), p.getGetter(), p.getSetter(), p.getConstructorParameter()
        }) {
      if (m != null && ai.hasIgnoreMarker(dc, m)) {
        return true;
      }
    }
    try {
      Field field = raw.getDeclaredField(p.getInternalName());
      com.fasterxml.jackson.annotation.JsonIgnore ignore =
          field.getAnnotation(com.fasterxml.jackson.annotation.JsonIgnore.class);
      return ignore != null && ignore.value();
    } catch (NoSuchFieldException e) {
      return false;
    }
  }
}
