package io.kvtier.bench.cluster;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Asks a node for CLUSTER INFO on a short-lived blocking socket, so that polling a dying or starting node can never
 * disturb the benchmark's own connections. Stateless; each call opens and closes its socket.
 */
final class InfoProbe {
    private static final byte[] COMMAND = "*2\r\n$7\r\nCLUSTER\r\n$4\r\nINFO\r\n".getBytes(StandardCharsets.US_ASCII);

    private InfoProbe() {
    }

    /** The node's CLUSTER INFO; throws when it cannot be reached within {@code timeout} or answers an error. */
    static ClusterInfo clusterInfo(String host, int port, Duration timeout) throws IOException {
        int millis = Math.clamp(timeout.toMillis(), 1, Integer.MAX_VALUE);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), millis);
            s.setSoTimeout(millis);
            OutputStream out = s.getOutputStream();
            out.write(COMMAND);
            out.flush();
            InputStream in = s.getInputStream();
            String header = line(in);
            if (header.startsWith("-")) {
                throw new IOException(host + ":" + port + " answered CLUSTER INFO with " + header);
            }
            if (!header.startsWith("$") && !header.startsWith("=")) {
                throw new IOException(host + ":" + port + " answered CLUSTER INFO with an unexpected " + header);
            }
            int length = Integer.parseInt(header.substring(1));
            byte[] body = in.readNBytes(length);
            if (body.length < length) {
                throw new IOException(host + ":" + port + " closed the connection in a CLUSTER INFO reply");
            }
            String text = new String(body, StandardCharsets.UTF_8);
            return ClusterInfo.parse(header.startsWith("=") && text.startsWith("txt:") ? text.substring(4) : text);
        } catch (NumberFormatException e) {
            throw new IOException(host + ":" + port + " sent a malformed CLUSTER INFO length", e);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c == -1) {
                throw new IOException("connection closed before a reply");
            }
            if (c != '\r') {
                b.write(c);
            }
        }
        return b.toString(StandardCharsets.US_ASCII);
    }
}
