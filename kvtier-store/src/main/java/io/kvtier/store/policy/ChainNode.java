package io.kvtier.store.policy;

/**
 * A policy item that may follow another in a chain (a KV-cache prompt's chunk after the one before it), for
 * {@link ChainPolicy}. A subclass, so that the store's entries, which learn no chains yet, keep their 64 bytes.
 */
public abstract class ChainNode extends PolicyNode {
    /**
     * The item before this one in its chain, as the caller learned it before {@link TierPolicy#add}; null if none is
     * known. Read under the policy's lock.
     */
    public PolicyNode parent;
    int placed;              // ChainPolicy: its count of placements when this node was last placed in main
}
