/**
 * The command table: each Redis command is a {@link io.kvtier.server.command.CommandSpec} (name, arity, flags,
 * action), grouped in classes by concern. Replies and error texts match Redis 7 byte for byte.
 */
package io.kvtier.server.command;
