package dev.idemkit.examples.adoption;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A separate Spring Boot application made of what the README gives, as a user would make it: a
 * {@code pom.xml} with {@code spring-boot-starter-parent} and the README's dependencies, one
 * application class holding the README's {@code @Bean} with the README's controller beside it, and
 * the {@code payment} table the README leaves to the user. The only code added is what the README's
 * snippet leaves implicit: the application class and the imports an IDE would add.
 */
final class ReadmeApp {

  /** What the README's code uses without importing it. */
  private static final String IMPLICIT_IMPORTS =
      """
      import java.math.BigDecimal;
      import java.net.URI;
      import java.util.Map;
      import java.util.UUID;
      import org.springframework.boot.SpringApplication;
      import org.springframework.boot.autoconfigure.SpringBootApplication;
      import org.springframework.context.annotation.Bean;
      import org.springframework.http.ResponseEntity;
      import org.springframework.jdbc.core.simple.JdbcClient;
      import org.springframework.web.bind.annotation.PostMapping;
      import org.springframework.web.bind.annotation.RequestBody;
      import org.springframework.web.bind.annotation.RestController;
      """;

  /** The user's own table, as the README's insert needs it. */
  private static final String SCHEMA =
      """
      create table if not exists payment (
        id text primary key,
        account_id text not null,
        amount numeric(19, 2) not null,
        currency text not null
      );
      """;

  private ReadmeApp() {}

  /** Writes the application's project into {@code dir} (emptied first). */
  static void write(ReadmeService readme, String springBootVersion, Path dir) throws IOException {
    delete(dir);
    Path main = dir.resolve("src/main/java/com/example/payments");
    Path resources = dir.resolve("src/main/resources");
    Files.createDirectories(main);
    Files.createDirectories(resources);
    // Its own Maven project: the search for .mvn stops here, not at this repository's.
    Files.createDirectories(dir.resolve(".mvn"));
    Files.writeString(dir.resolve("pom.xml"), pom(readme, springBootVersion));
    Files.writeString(main.resolve("PaymentsApplication.java"), application(readme));
    Files.writeString(resources.resolve("schema.sql"), SCHEMA);
    // schema.sql on any database: Spring runs it on in-memory ones only unless asked.
    Files.writeString(resources.resolve("application.properties"), "spring.sql.init.mode=always\n");
  }

  private static String pom(ReadmeService readme, String springBootVersion) {
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <project xmlns="http://maven.apache.org/POM/4.0.0"
                 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                 xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
          <modelVersion>4.0.0</modelVersion>
          <parent>
            <groupId>org.springframework.boot</groupId>
            <artifactId>spring-boot-starter-parent</artifactId>
            <version>%s</version>
            <relativePath/>
          </parent>
          <groupId>com.example</groupId>
          <artifactId>payments</artifactId>
          <version>1.0</version>
          <properties>
            <java.version>17</java.version>
          </properties>
          <dependencies>
        %s  </dependencies>
          <build>
            <finalName>payments</finalName>
            <plugins>
              <plugin>
                <groupId>org.springframework.boot</groupId>
                <artifactId>spring-boot-maven-plugin</artifactId>
              </plugin>
            </plugins>
          </build>
        </project>
        """
        .formatted(springBootVersion, readme.dependencies().indent(4));
  }

  private static String application(ReadmeService readme) {
    return """
        package com.example.payments;

        %s
        %s
        @SpringBootApplication
        public class PaymentsApplication {

          public static void main(String[] args) {
            SpringApplication.run(PaymentsApplication.class, args);
          }

        %s}

        %s
        """
        .formatted(
            readme.imports(), IMPLICIT_IMPORTS, readme.bean().indent(2), readme.controller());
  }

  /**
   * Builds the application's jar with {@code mvn package}: idemkit from {@code itRepo} (where
   * maven-invoker-plugin installed what this build made), everything else from the user's local
   * repository through {@code settings}.
   *
   * @return the runnable jar
   */
  static Path build(Path dir, Path mavenHome, Path itRepo, Path userRepo, Path settings)
      throws IOException, InterruptedException {
    Path filtered = dir.resolve("settings.xml");
    Files.writeString(
        filtered,
        Files.readString(settings).replace("@localRepositoryUrl@", userRepo.toUri().toString()));
    Path log = dir.resolve("build.log");
    Process build =
        new ProcessBuilder(
                mavenHome.resolve("bin/mvn").toString(),
                "-B",
                "-ntp",
                "-s",
                filtered.toString(),
                "-Dmaven.repo.local=" + itRepo,
                "-DskipTests",
                "package")
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!build.waitFor(5, TimeUnit.MINUTES)) {
      build.destroyForcibly().waitFor();
    }
    assertThat(build.exitValue())
        .as(
            "the application made of README.md's \"%s\" builds with mvn package (%s):%n%s",
            ReadmeService.SECTION, log, tail(log, 60))
        .isZero();
    Path jar = dir.resolve("target/payments.jar");
    assertThat(jar).as("the built application's jar").isRegularFile();
    return jar;
  }

  /** The last {@code n} lines of a log, for a failure's message. */
  static String tail(Path log, int n) throws IOException {
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
  }

  static void delete(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
  }
}
