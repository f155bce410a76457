/**
 * Which memory-resident value to demote next. {@link io.kvtier.store.policy.S3FifoPolicy} is the production policy
 * (scan-resistant); {@link io.kvtier.store.policy.LruPolicy} is the baseline it is measured against.
 */
package io.kvtier.store.policy;
