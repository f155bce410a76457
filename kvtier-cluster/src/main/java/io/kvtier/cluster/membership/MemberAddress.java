package io.kvtier.cluster.membership;

import io.kvtier.cluster.Member;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.jgroups.Address;
import org.jgroups.util.ExtendedUUID;

/**
 * Carries a node's {@link Member} (id, weight and RESP endpoint) inside its JGroups address. An {@link ExtendedUUID}
 * is serialized with its key/value pairs wherever the address travels (discovery responses, views, merge views), so
 * every node reads a peer's member straight from the view, with no extra message, state transfer or race against it.
 * All values are UTF-8 text (the weight in decimal) so that JGroups' logs, which print the keys, stay readable. An
 * address without the endpoint key (a node of an older version) advertises the unknown endpoint "". Stateless.
 */
final class MemberAddress {
    static final String ID_KEY = "kvtier.id";
    static final String WEIGHT_KEY = "kvtier.weight";
    static final String ENDPOINT_KEY = "kvtier.endpoint";

    private MemberAddress() {
    }

    /** A fresh, random address advertising {@code member}. */
    static ExtendedUUID of(Member member) {
        return ExtendedUUID.randomUUID()
                .put(ID_KEY, member.id().getBytes(StandardCharsets.UTF_8))
                .put(WEIGHT_KEY, Long.toString(member.weight()).getBytes(StandardCharsets.UTF_8))
                .put(ENDPOINT_KEY, member.endpoint().getBytes(StandardCharsets.UTF_8));
    }

    /** The member {@code address} advertises, or empty if it is not a valid kvtier address. */
    static Optional<Member> decode(Address address) {
        if (!(address instanceof ExtendedUUID uuid)) {
            return Optional.empty();
        }
        byte[] id = uuid.get(ID_KEY);
        byte[] weight = uuid.get(WEIGHT_KEY);
        byte[] endpoint = uuid.get(ENDPOINT_KEY);
        if (id == null || weight == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Member(new String(id, StandardCharsets.UTF_8),
                    Long.parseLong(new String(weight, StandardCharsets.UTF_8)),
                    endpoint == null ? "" : new String(endpoint, StandardCharsets.UTF_8)));
        } catch (IllegalArgumentException e) { // includes NumberFormatException
            return Optional.empty(); // blank id, bad or non-positive weight, bad endpoint: not one of ours
        }
    }
}
