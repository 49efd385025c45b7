package dev.idemkit.spring.boot;

import dev.idemkit.StoredResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import tools.jackson.databind.json.JsonMapper;

/**
 * Builds the answers phased operations store, serialized once with the application's JSON mapper,
 * so every replay sends the same bytes.
 */
public class StoredResponses {

  private final JsonMapper mapper;

  public StoredResponses(JsonMapper mapper) {
    this.mapper = mapper;
  }

  /** A JSON answer; {@code location} may be {@code null}. */
  public StoredResponse json(int status, Object body, String location) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(HttpHeaders.CONTENT_TYPE, MediaType.APPLICATION_JSON_VALUE);
    if (location != null) {
      headers.put(HttpHeaders.LOCATION, location);
    }
    return StoredResponse.of(status, headers, mapper.writeValueAsBytes(body));
  }

  /** An {@code application/problem+json} answer. */
  public StoredResponse problem(ProblemDetail problem) {
    return StoredResponse.of(
        problem.getStatus(),
        Map.of(HttpHeaders.CONTENT_TYPE, Problems.PROBLEM_JSON.toString()),
        Problems.body(problem));
  }
}
