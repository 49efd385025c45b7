package dev.idemkit.examples.adoption;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What README.md's section "Add it to your service" gives a user to copy: its dependency block (the
 * {@code xml} block) and its code (the {@code java} block: imports, the controller, and the tenant
 * resolver's {@code @Bean} for the application class).
 *
 * @param text the section's text
 * @param dependencies the {@code <dependency>} elements, as written
 * @param imports the code's {@code import} lines
 * @param controller the code between the imports and the {@code @Bean}
 * @param bean the {@code @Bean} method and its comment, as written
 */
record ReadmeService(
    String text, String dependencies, String imports, String controller, String bean) {

  static final String SECTION = "## Add it to your service";

  /** The section of {@code readme}, its blocks found or the test failed with what is missing. */
  static ReadmeService of(Path readme) throws IOException {
    List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
    int start = lines.indexOf(SECTION);
    assertThat(start).as("%s has a section \"%s\"", readme, SECTION).isNotNegative();
    int end = start + 1;
    while (end < lines.size() && !lines.get(end).startsWith("## ")) {
      end++;
    }
    List<String> section = lines.subList(start, end);
    String xml = onlyBlock(section, "xml");
    String java = onlyBlock(section, "java");

    List<String> code = java.lines().toList();
    int beanAt = -1;
    for (int i = 0; i < code.size(); i++) {
      if (code.get(i).startsWith("@Bean")) {
        assertThat(beanAt).as("the README's java block has one @Bean").isNegative();
        beanAt = i;
      }
    }
    assertThat(beanAt)
        .as("the README's java block ends with the tenant resolver's @Bean:%n%s", java)
        .isPositive();
    String imports =
        code.subList(0, beanAt).stream()
            .filter(l -> l.startsWith("import "))
            .collect(Collectors.joining("\n"));
    String controller =
        code.subList(0, beanAt).stream()
            .filter(l -> !l.startsWith("import "))
            .collect(Collectors.joining("\n"))
            .strip();
    assertThat(controller)
        .as("the README's java block has a @RestController class:%n%s", java)
        .contains("@RestController", "class ");
    String bean = String.join("\n", code.subList(beanAt, code.size()));
    return new ReadmeService(String.join("\n", section), xml, imports, controller, bean);
  }

  /** The one fenced block with this info string, without its fences. */
  private static String onlyBlock(List<String> section, String language) {
    List<String> blocks = new ArrayList<>();
    StringBuilder block = null;
    for (String line : section) {
      if (block == null && line.equals("```" + language)) {
        block = new StringBuilder();
      } else if (block != null && line.equals("```")) {
        blocks.add(block.toString());
        block = null;
      } else if (block != null) {
        block.append(line).append('\n');
      }
    }
    assertThat(blocks)
        .as("the README's section \"%s\" has one ```%s block", SECTION, language)
        .hasSize(1);
    return blocks.get(0);
  }
}
