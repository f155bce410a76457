/**
 * Replies to clients: {@link io.kvtier.server.reply.Reply} writes RESP2 or RESP3 on a connection (or captures it for a
 * script), {@link io.kvtier.server.reply.CommandException} carries a Redis error to it, and
 * {@link io.kvtier.server.reply.ErrorStats} counts the error replies by code. Whatever a reply counts is passed in.
 */
package io.kvtier.server.reply;
