/**
 * The command table: each Redis command is a {@link io.kvtier.server.command.CommandSpec} (name, arity, flags,
 * action), grouped in classes by concern. Replies and error texts match Redis 7 byte for byte.
 * {@link io.kvtier.server.command.ServerContext} is what the commands share (store, options, sessions, counters); only
 * the layers above (the Netty pipeline, the server's wiring) use it.
 */
package io.kvtier.server.command;
