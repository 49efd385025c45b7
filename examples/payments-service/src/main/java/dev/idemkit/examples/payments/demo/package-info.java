/**
 * The demo and the test hooks, none of them part of a deployment: the provider and mail simulators
 * this process runs when no URL is configured, the {@code X-Provider-Fault} header, fault injection
 * in the event flow, the crash points that kill the process, a deliberately broken idempotency
 * store for the chaos run, and the benchmark's baseline endpoint. {@code DemoConfiguration} says
 * which switch turns on what; it is registered in {@code
 * META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports}, so no other
 * package names this one. {@code DemoSecrets} keeps the demo's public secrets to the embedded demo
 * (and refuses them anywhere else).
 */
package dev.idemkit.examples.payments.demo;
