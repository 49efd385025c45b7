/**
 * The chaos run (docs/proof.md): two instances of the payments service on one database, clients
 * retrying with their keys, a nemesis that kills, pauses and cuts, then Jepsen-style accounting of
 * what every client was told against what the database and the provider hold.
 *
 * <p>Its rooms: {@code ChaosRun} runs the steps in order, {@code ChaosOptions} reads the command
 * line, {@code Cluster} starts the instances and, with the test kit's {@code ReplicatedPostgres},
 * the payments database's primary and standby when it has them, {@code ClientProcess} is one
 * client, {@code Nemesis} the faults, {@code History} what the clients saw, {@code Accounting} and
 * {@code LedgerConservation} the checks, {@code Report} and {@code Outcome} what is printed and
 * written.
 *
 * <p>Logging: SLF4J (to the simple binding), which the service jars it starts use too; progress
 * lines go to standard error ({@code Progress}).
 */
package dev.idemkit.chaos;
