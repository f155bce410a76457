/**
 * {@code kvtier cluster ...}: commands that inspect a running cluster through one node's KVT.STATUS (CLUSTER INFO plus
 * the membership), printed for people (a table) or machines (JSON).
 */
package io.kvtier.cli.cluster;
