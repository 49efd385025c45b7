package dev.idemkit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.conformance.FlawedServer.Flaw;
import dev.idemkit.conformance.FlawedServer.Semantics;
import dev.idemkit.conformance.UsageTest.Result;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The JUnit XML is all a CI dashboard shows of a run: a failure's message says what the check
 * found, and the run's warnings are in the suite, not only on standard error.
 */
class JunitReportTest {

  @TempDir Path dir;

  static Element suite(Path junit) throws Exception {
    return DocumentBuilderFactory.newInstance()
        .newDocumentBuilder()
        .parse(junit.toFile())
        .getDocumentElement();
  }

  static List<String> warningProperties(Element suite) {
    List<String> warnings = new ArrayList<>();
    NodeList properties = suite.getElementsByTagName("property");
    for (int i = 0; i < properties.getLength(); i++) {
      Element p = (Element) properties.item(i);
      if (p.getAttribute("name").equals("warning")) {
        warnings.add(p.getAttribute("value"));
      }
    }
    return warnings;
  }

  /** The suite's own {@code system-err}, not a test case's. */
  static String suiteSystemErr(Element suite) {
    NodeList children = suite.getChildNodes();
    for (int i = 0; i < children.getLength(); i++) {
      if (children.item(i) instanceof Element e && e.getTagName().equals("system-err")) {
        return e.getTextContent();
      }
    }
    return "";
  }

  @Test
  void theWarningsAndWhatAFailedCheckFoundAreInTheXml() throws Exception {
    Path junit = dir.resolve("report.xml");
    Result r;
    try (FlawedServer api = new FlawedServer(Flaw.NONE, Semantics.BARE_KEYS_ONLY, 20)) {
      r =
          UsageTest.run(
              api.itemsArgs(
                  "--only",
                  "key.form,key.missing,effect.exactly-one",
                  "--junit",
                  junit.toString()));
    }

    assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
    Element suite = suite(junit);
    assertThat(suite.getAttribute("failures")).isEqualTo("1");
    assertThat(warningProperties(suite))
        .singleElement()
        .asString()
        .startsWith("no --effect-url: that each operation ran exactly once")
        .contains("effect.exactly-one is skipped");
    assertThat(suiteSystemErr(suite)).contains("warning: no --effect-url");

    NodeList failures = suite.getElementsByTagName("failure");
    assertThat(failures.getLength()).isEqualTo(1);
    Element failure = (Element) failures.item(0);
    assertThat(((Element) failure.getParentNode()).getAttribute("name")).isEqualTo("key.form");
    assertThat(failure.getAttribute("message"))
        .contains("the API refuses the key in the ietf profile's form (an sf-string, \"")
        .contains("it accepts a key sent bare");
  }

  @Test
  void aRunWithoutWarningsHasNone() throws Exception {
    Path junit = dir.resolve("quiet.xml");
    try (FlawedServer api = new FlawedServer(Flaw.NONE, 20)) {
      Result r = UsageTest.run(api.itemsArgs("--only", "key.form", "--junit", junit.toString()));
      assertThat(r.exit()).as(r.out() + r.err()).isZero();
    }

    Element suite = suite(junit);
    assertThat(warningProperties(suite)).isEmpty();
    assertThat(suiteSystemErr(suite)).isEmpty();
  }
}
