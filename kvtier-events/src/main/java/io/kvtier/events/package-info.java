/**
 * Event streams over ZMQ in vLLM's framing: a publisher with a replay buffer (and, for kvtier's store events,
 * snapshots), a subscriber that checks every sequence number and repairs gaps, and kvtier's store-event format.
 */
package io.kvtier.events;
