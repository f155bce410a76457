/** The cluster's refusals as types (MOVED, TRYAGAIN, CLUSTERDOWN, ...), mapped to Redis errors by the server. */
package io.kvtier.cluster.error;
