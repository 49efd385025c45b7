package dev.idemkit.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README and the pages under docs/ point only at what exists: every relative link names a file
 * of the repository (and, with a {@code #fragment}, a heading of that page), and every backticked
 * path that starts at the repository's top (such as {@code examples/quickstart} or {@code
 * tools/kafka-broker}) names a file or folder there; a build's output ({@code …/target/…}) is not
 * checked. And the README stays a page: at most 250 lines, with "Add it to your service" before any
 * operations detail.
 */
class DocsLinksTest {

  private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();

  private static final int README_MAX_LINES = 250;

  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
  private static final Pattern CODE_SPAN = Pattern.compile("`([^`\\n]+)`");
  private static final Pattern PATH = Pattern.compile("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)+/?");
  private static final Pattern HEADING = Pattern.compile("#{1,6}\\s+(.*)");

  /** Words of an operations section's heading: none may come before "Add it to your service". */
  private static final Pattern OPERATIONS =
      Pattern.compile(
          "operat|secret|master key|hmac|instance|kafka|cleanup|quota|recover|event",
          Pattern.CASE_INSENSITIVE);

  @Test
  void everyLinkAndRepositoryPathOfTheDocsExists() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path page : pages()) {
      broken.addAll(brokenReferences(page));
    }
    assertThat(broken).as("links and paths that name nothing").isEmpty();
  }

  @Test
  void theReadmeIsOnePageWithAddingItBeforeOperations() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("README.md"));
    assertThat(lines).as("README.md's lines").hasSizeLessThanOrEqualTo(README_MAX_LINES);

    List<String> headings = headings(String.join("\n", lines));
    int adding = headings.indexOf("Add it to your service");
    assertThat(adding).as("a heading \"Add it to your service\" in %s", headings).isPositive();
    assertThat(headings.subList(0, adding))
        .as("headings before \"Add it to your service\"")
        .noneMatch(h -> OPERATIONS.matcher(h).find());
  }

  /** The check itself: a link to a missing page, a missing heading or a missing path is found. */
  @Test
  void aBrokenLinkIsFound(@TempDir Path dir) throws IOException {
    Path docs = Files.createDirectories(dir.resolve("docs"));
    Files.createDirectories(dir.resolve("target")); // a build's output: not checked
    Files.writeString(docs.resolve("there.md"), "# There\n\n## A heading, with `code`\n");
    Path page = docs.resolve("page.md");
    Files.writeString(
        page,
        """
        # Page

        [fine](there.md#a-heading-with-code) [gone](missing.md) [no heading](there.md#elsewhere)
        [self](#page) `docs/there.md` `docs/absent.md` `docs/target/out.jar` `target/out.jar`

        ```sh
        [in a code block](not-checked.md)
        ```
        """);

    assertThat(brokenReferences(page, dir))
        .containsExactly(
            "docs/page.md: link missing.md: no such file",
            "docs/page.md: link there.md#elsewhere: no heading \"elsewhere\" in docs/there.md",
            "docs/page.md: path docs/absent.md: no such file or folder");
  }

  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }

  private static List<String> brokenReferences(Path page) throws IOException {
    return brokenReferences(page, ROOT);
  }

  /** What {@code page} links to or names that does not exist under {@code root}. */
  private static List<String> brokenReferences(Path page, Path root) throws IOException {
    String name = root.relativize(page).toString();
    String text = prose(Files.readString(page));
    List<String> broken = new ArrayList<>();
    Matcher link = LINK.matcher(text);
    while (link.find()) {
      String target = link.group(1);
      if (target.matches("[a-z]+:.*")) {
        continue; // http:, https:, mailto:
      }
      int hash = target.indexOf('#');
      String file = hash < 0 ? target : target.substring(0, hash);
      String fragment = hash < 0 ? "" : target.substring(hash + 1);
      Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
      if (!Files.exists(resolved)) {
        broken.add(name + ": link " + target + ": no such file");
      } else if (!fragment.isEmpty() && !anchors(Files.readString(resolved)).contains(fragment)) {
        broken.add(
            name
                + ": link "
                + target
                + ": no heading \""
                + fragment
                + "\" in "
                + root.relativize(resolved));
      }
    }
    Set<String> topLevel = new LinkedHashSet<>();
    try (Stream<Path> entries = Files.list(root)) {
      entries.forEach(e -> topLevel.add(e.getFileName().toString()));
    }
    Matcher code = CODE_SPAN.matcher(text);
    while (code.find()) {
      String path = code.group(1);
      if (PATH.matcher(path).matches()
          && topLevel.contains(path.substring(0, path.indexOf('/')))
          && !("/" + path).contains("/target/")
          && !Files.exists(root.resolve(path))) {
        broken.add(name + ": path " + path + ": no such file or folder");
      }
    }
    return broken;
  }

  /** The page without its fenced code blocks, whose brackets and backticks are code. */
  private static String prose(String page) {
    StringBuilder prose = new StringBuilder();
    boolean inCode = false;
    for (String line : page.split("\n")) {
      if (line.strip().startsWith("```")) {
        inCode = !inCode;
      } else if (!inCode) {
        prose.append(line).append('\n');
      }
    }
    return prose.toString();
  }

  private static List<String> headings(String page) {
    List<String> headings = new ArrayList<>();
    for (String line : prose(page).split("\n")) {
      Matcher heading = HEADING.matcher(line);
      if (heading.matches()) {
        headings.add(heading.group(1).strip());
      }
    }
    return headings;
  }

  /**
   * The fragments a page's headings answer to, as GitHub makes them: lower case, punctuation
   * dropped, spaces as hyphens, a repeated one numbered ({@code -1}, {@code -2}, …).
   */
  private static Set<String> anchors(String page) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String heading : headings(page)) {
      String anchor =
          heading.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
      int n = seen.merge(anchor, 1, Integer::sum) - 1;
      anchors.add(n == 0 ? anchor : anchor + "-" + n);
    }
    return anchors;
  }
}
