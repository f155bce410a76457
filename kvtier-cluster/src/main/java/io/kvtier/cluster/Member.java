package io.kvtier.cluster;

import io.kvtier.client.HostPort;
import java.util.Objects;

/**
 * A cluster node as placement sees it: a stable identity, a capacity weight and where clients reach it. The id alone
 * decides the node's hash scores, so a node that restarts under the same id gets its slots back; the weight (e.g.
 * memory + disk bytes) decides its share of slots. The endpoint plays no part in placement.
 *
 * @param id       the node's identity, non-blank and unique within a membership
 * @param weight   the node's capacity, positive; only ratios between members matter
 * @param endpoint the RESP endpoint other nodes and clients connect to, "host:port" or "[v6]:port" with the port in
 *                 1..65535; "" when unknown (placement-only uses and tests)
 */
public record Member(String id, long weight, String endpoint) {
    public Member {
        Objects.requireNonNull(id, "member id");
        if (id.isBlank()) {
            throw new IllegalArgumentException("member id \"" + id + "\" is blank");
        }
        if (weight <= 0) {
            throw new IllegalArgumentException("member " + id + " weight " + weight + " must be positive");
        }
        Objects.requireNonNull(endpoint, "member endpoint");
        if (!endpoint.isEmpty()) {
            HostPort.parse(endpoint, "member " + id + " endpoint");
        }
    }

    /** A member whose endpoint is unknown (""), for placement alone. */
    public Member(String id, long weight) {
        this(id, weight, "");
    }

    /** The host of {@link #endpoint()}, IPv6 literals without brackets. */
    public String host() {
        return hostPort().host();
    }

    /** The port of {@link #endpoint()}. */
    public int port() {
        return hostPort().port();
    }

    private HostPort hostPort() {
        if (endpoint.isEmpty()) {
            throw new IllegalStateException("member " + id + " advertises no endpoint");
        }
        return HostPort.parse(endpoint, "member " + id + " endpoint");
    }
}
