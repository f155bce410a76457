/**
 * The KV-cache map: which engine holds which leading blocks of a prompt, on which medium, keyed by the map's own chain
 * of block hashes over token ids ({@link io.kvtier.router.map.PrefixHash}).
 */
package io.kvtier.router.map;
