/**
 * Integration, differential and fault tests: each starts real {@code ./kvtier server} processes (and, where it
 * compares, a real redis-server) and talks to them with real clients.
 */
package io.kvtier.it;
