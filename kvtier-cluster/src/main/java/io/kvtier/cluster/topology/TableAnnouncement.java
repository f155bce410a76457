package io.kvtier.cluster.topology;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import io.kvtier.cluster.SlotTable;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the coordinator broadcasts for a slot table: its epoch and inputs, not its 16384 slots. Placement is a pure
 * function of (members, replicas), so every node recomputes the identical table and the message stays a few bytes per
 * member. Immutable.
 *
 * <p>Wire format, big-endian: kind byte {@value #KIND}, epoch (long), replicas (int), member count (int), then per
 * member its id (modified UTF-8, as {@link DataOutputStream#writeUTF}), weight (long) and RESP endpoint (modified
 * UTF-8, "" when unknown). The endpoint travels so that every node's table says where each owner serves clients.
 *
 * @param epoch    the table's epoch, positive
 * @param members  the members the table is computed over
 * @param replicas backups per slot, at least 0
 */
record TableAnnouncement(long epoch, List<Member> members, int replicas) {
    /** First byte of an announcement; other kinds of control message start with other bytes. */
    static final byte KIND = 1;
    /** Far above any real cluster; bounds what a corrupt count can make a node allocate. */
    private static final int MAX_MEMBERS = 16_384;

    TableAnnouncement {
        if (epoch < 1) {
            throw new IllegalArgumentException("announced epoch " + epoch + " must be at least 1");
        }
        if (replicas < 0) {
            throw new IllegalArgumentException("announced replicas " + replicas + " must be at least 0");
        }
        members = List.copyOf(members);
    }

    /** The table every node computes from this announcement. */
    SlotTable table() {
        return Placement.compute(epoch, members, replicas);
    }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(21 + members.size() * 48);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(KIND);
            out.writeLong(epoch);
            out.writeInt(replicas);
            out.writeInt(members.size());
            for (Member m : members) {
                out.writeUTF(m.id());
                out.writeLong(m.weight());
                out.writeUTF(m.endpoint());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // unreachable: in-memory stream
        }
        return bytes.toByteArray();
    }

    /**
     * Parses {@code payload}.
     *
     * @throws IllegalArgumentException if it is not an announcement (truncated, another kind,
     *                                  invalid member or counts)
     */
    static TableAnnouncement decode(byte[] payload) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload))) {
            byte kind = in.readByte();
            if (kind != KIND) {
                throw new IllegalArgumentException("control message kind " + kind + " is not a slot table"
                        + " announcement (" + KIND + ")");
            }
            long epoch = in.readLong();
            int replicas = in.readInt();
            int count = in.readInt();
            if (count < 0 || count > MAX_MEMBERS) {
                throw new IllegalArgumentException("slot table announcement of " + count + " members, limit "
                        + MAX_MEMBERS);
            }
            List<Member> members = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                members.add(new Member(in.readUTF(), in.readLong(), in.readUTF()));
            }
            if (in.available() > 0) {
                throw new IllegalArgumentException("slot table announcement has " + in.available()
                        + " trailing bytes");
            }
            return new TableAnnouncement(epoch, members, replicas);
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated slot table announcement of " + payload.length + " bytes",
                    e);
        }
    }
}
