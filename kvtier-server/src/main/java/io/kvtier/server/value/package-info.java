/**
 * Values between clients and the store, below the Netty pipeline: payload sinks that stream a request's values into
 * store memory, a spool file or the disk tier within the bounds of {@link io.kvtier.server.value.RequestMemory}, and
 * {@link io.kvtier.server.value.Values} and {@link io.kvtier.server.value.DiskReads}, which store arguments and write
 * memory- or disk-resident values into replies.
 */
package io.kvtier.server.value;
