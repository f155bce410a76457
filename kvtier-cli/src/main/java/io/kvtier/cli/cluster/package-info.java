/**
 * {@code kvtier cluster ...}: commands that inspect a running cluster through one node's CLUSTER INFO, printed for
 * people (a table) or machines (JSON).
 */
package io.kvtier.cli.cluster;
