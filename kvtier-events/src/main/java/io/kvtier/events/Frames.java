package io.kvtier.events;

import java.util.ArrayList;
import java.util.List;
import org.zeromq.ZMQ;

/** Reading one multipart ZMQ message whole. Stateless. */
final class Frames {
    private Frames() {
    }

    /**
     * The next message on {@code socket}, every frame of it, or null where none came ({@code flags}: 0 waits up to the
     * socket's receive timeout, {@link ZMQ#DONTWAIT} not at all). Not for sockets shared between threads.
     */
    static List<byte[]> read(ZMQ.Socket socket, int flags) {
        byte[] first = socket.recv(flags);
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(3);
        frames.add(first);
        while (socket.hasReceiveMore()) {
            frames.add(socket.recv());
        }
        return frames;
    }
}
