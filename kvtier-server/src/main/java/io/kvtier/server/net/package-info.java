/**
 * The network edge: one {@link io.kvtier.server.net.ConnectionHandler} per client runs its commands strictly in
 * order, streaming large payloads into store memory (through the sinks of {@code io.kvtier.server.value}) and pausing
 * reads while it waits for memory, the disk or a slow reader.
 */
package io.kvtier.server.net;
