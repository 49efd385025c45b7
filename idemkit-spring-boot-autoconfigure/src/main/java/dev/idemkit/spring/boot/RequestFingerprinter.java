package dev.idemkit.spring.boot;

import dev.idemkit.Fingerprint;
import dev.idemkit.FingerprintRecipes;
import dev.idemkit.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import tools.jackson.databind.json.JsonMapper;

/**
 * Fingerprints a request by what it means (contract §4 (docs/contract.md)): the operation, the path
 * variables, the API version, and the bound, validated command in its canonical form. Transport
 * metadata, the {@code Authorization} header and the key itself are left out.
 */
public class RequestFingerprinter {

  private final JsonMapper mapper;
  private final FingerprintRecipes recipes;

  public RequestFingerprinter(JsonMapper mapper) {
    this(mapper, FingerprintRecipes.plain());
  }

  /** Fingerprints with {@code recipes}: keyed, and comparable across recipe changes. */
  public RequestFingerprinter(JsonMapper mapper, FingerprintRecipes recipes) {
    this.mapper = mapper;
    this.recipes = recipes;
  }

  public Fingerprint fingerprint(
      String operation, Object command, Map<String, String> pathVariables, String apiVersion) {
    return recipes.fingerprint(tree(operation, command, pathVariables, apiVersion));
  }

  /**
   * The request's fingerprint under the recipe and key a stored fingerprint was made with, so a
   * retry is compared as its record was made; empty if that recipe or key is no longer known.
   */
  public Optional<Fingerprint> recompute(
      String operation,
      Object command,
      Map<String, String> pathVariables,
      String apiVersion,
      Fingerprint stored) {
    return recipes.recompute(tree(operation, command, pathVariables, apiVersion), stored);
  }

  private Map<String, Object> tree(
      String operation, Object command, Map<String, String> pathVariables, String apiVersion) {
    Map<String, Object> tree = new LinkedHashMap<>();
    tree.put("operation", operation);
    tree.put("path", new TreeMap<>(pathVariables));
    tree.put("apiVersion", apiVersion == null ? "" : apiVersion);
    tree.put("command", canonical(command));
    return tree;
  }

  /** The command's canonical form, or its JSON form read back as a plain tree. */
  protected Object canonical(Object command) {
    if (command == null) {
      return null;
    }
    if (command instanceof CanonicalCommand c) {
      return c.canonicalForm();
    }
    return Json.parse(mapper.writeValueAsString(command));
  }
}
