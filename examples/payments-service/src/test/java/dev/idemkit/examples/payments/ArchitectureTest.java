package dev.idemkit.examples.payments;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The service's packages and which may depend on which, checked on its main classes.
 *
 * <pre>
 *   (root): the application and the event flow's wiring  ->  everything below
 *   demo                                                  ->  the domains, events, web
 *   shipping -> orders -> payments;  ledger, receipts -> payments
 *   payments, orders, ledger, receipts, shipping          ->  events, web, shards
 *   web (the HTTP layer every domain uses)                ->  events, erasure, shards (operators)
 *   shards (lanes, migrations, tenant moves)              ->  erasure (its table list)
 *   events, erasure                                       ->  none of the above
 * </pre>
 */
class ArchitectureTest {

  private static final String ROOT = "dev.idemkit.examples.payments";

  private static final String[] DOMAINS = {
    ROOT + ".payments..",
    ROOT + ".orders..",
    ROOT + ".ledger..",
    ROOT + ".receipts..",
    ROOT + ".shipping.."
  };

  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  @Test
  void thePackagesAreFreeOfCycles() {
    slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(CLASSES);
  }

  /**
   * The root package assembles the rest; nothing points back at it, so no cycle runs through it.
   */
  @Test
  void nothingDependsOnTheApplicationPackage() {
    noClasses()
        .that()
        .resideOutsideOfPackage(ROOT)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(ROOT)
        .check(CLASSES);
  }

  /**
   * The demo (simulators, faults, crash points, the broken store, the benchmark's endpoint) plugs
   * itself in; no production class names it.
   */
  @Test
  void nothingOutsideTheDemoDependsOnIt() {
    noClasses()
        .that()
        .resideOutsideOfPackage(ROOT + ".demo..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage(ROOT + ".demo..")
        .check(CLASSES);
  }

  /** The HTTP layer serves every domain and knows none of them. */
  @Test
  void theWebLayerKnowsNoDomain() {
    noClasses()
        .that()
        .resideInAPackage(ROOT + ".web..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(DOMAINS)
        .check(CLASSES);
  }

  /**
   * Appending events, the operators' erasure and the shards' lanes and moves serve the domains and
   * know none of them.
   */
  @Test
  void eventsErasureAndShardsKnowNoDomainAndNoWeb() {
    noClasses()
        .that()
        .resideInAnyPackage(ROOT + ".events..", ROOT + ".erasure..", ROOT + ".shards..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(DOMAINS)
        .orShould()
        .dependOnClassesThat()
        .resideInAPackage(ROOT + ".web..")
        .check(CLASSES);
  }

  /**
   * A domain's rows, flows, provider and mail clients and event consumers know no HTTP layer of
   * this service: only its controllers, requests and refusals use {@code web}.
   */
  @Test
  void aDomainsCoreDoesNotDependOnTheWebLayer() {
    noClasses()
        .that()
        .resideInAnyPackage(DOMAINS)
        .and()
        .haveNameMatching(".*(Repository|Flow|Consumer|Client)")
        .should()
        .dependOnClassesThat()
        .resideInAPackage(ROOT + ".web..")
        .check(CLASSES);
  }
}
