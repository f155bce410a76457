package io.kvtier.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Test hosts for partition tests: {@code n} Linux network namespaces, each with one address on a private bridge of
 * its own, {@value #SUBNET}.0/24, that also reaches this (the test's) namespace at {@value #SUBNET}.254. Taking a
 * namespace's link down cuts it off from every other one and from the test, as a pulled cable would; its processes
 * keep running. Needs root and iproute2 ({@link #available()}); everything is removed on {@link #close()}.
 * Nothing here routes beyond the bridge: the subnet's route points at it, so no test traffic leaves the machine.
 *
 * <p>{@link #cut} silences one pair of namespaces only (a partial partition: the test, and every other namespace,
 * still reach both): each side's neighbour entry for the other's address points at a hardware address nobody has,
 * so frames go nowhere and neither side hears anything, not even a refusal, as with a dropping firewall; it needs
 * nothing beyond iproute2 (no iptables, nft or tc actions, which a container's kernel may lack).
 */
final class NetworkNamespaces implements AutoCloseable {
    static final String SUBNET = "10.231.0";
    /** A locally administered hardware address no interface has: where {@link #cut} sends a peer's frames. */
    private static final String NOWHERE = "02:00:00:00:de:ad";

    private final String tag = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000));
    private final String bridge = "kvtbr" + tag;
    private final int count;
    /** Pairs {@link #cut} and not yet healed, as {a, b} with a &lt; b. */
    private final java.util.Set<java.util.List<Integer>> cuts = new java.util.LinkedHashSet<>();

    private NetworkNamespaces(int count) {
        this.count = count;
    }

    /** Whether this process may create namespaces and links (root with iproute2), and no other run holds the subnet. */
    static boolean available() {
        try {
            return run(List.of("id", "-u")).trim().equals("0") && run(List.of("ip", "-V")).contains("iproute2")
                    && !run(List.of("ip", "-4", "addr")).contains(SUBNET + ".");
        } catch (IOException e) {
            return false;
        }
    }

    /** Creates the bridge and {@code n} namespaces, namespace i at {@link #address}(i), all links up. */
    static NetworkNamespaces create(int n) throws IOException {
        NetworkNamespaces ns = new NetworkNamespaces(n);
        try {
            ns.ip("link", "add", ns.bridge, "type", "bridge");
            ns.ip("addr", "add", SUBNET + ".254/24", "dev", ns.bridge);
            ns.ip("link", "set", ns.bridge, "up");
            for (int i = 0; i < n; i++) {
                String name = ns.name(i);
                ns.ip("netns", "add", name);
                ns.ip("link", "add", ns.hostLink(i), "type", "veth", "peer", "name", "eth0", "netns", name);
                ns.ip("link", "set", ns.hostLink(i), "master", ns.bridge);
                ns.ip("link", "set", ns.hostLink(i), "up");
                ns.ip("-n", name, "addr", "add", ns.address(i) + "/24", "dev", "eth0");
                ns.ip("-n", name, "link", "set", "eth0", "up");
                ns.ip("-n", name, "link", "set", "lo", "up");
            }
        } catch (IOException | RuntimeException e) {
            ns.close();
            throw e;
        }
        return ns;
    }

    String address(int i) {
        return SUBNET + "." + (i + 1);
    }

    /** The command prefix that runs a program inside namespace {@code i}. */
    List<String> exec(int i) {
        return List.of("ip", "netns", "exec", name(i));
    }

    /** Cuts namespace {@code i} off from all others and from the test. */
    void isolate(int i) throws IOException {
        ip("link", "set", hostLink(i), "down");
    }

    /** Reconnects namespace {@code i}. */
    void heal(int i) throws IOException {
        ip("link", "set", hostLink(i), "up");
    }

    /** Silences the path between namespaces {@code a} and {@code b}, both ways; everything else still flows. */
    synchronized void cut(int a, int b) throws IOException {
        if (cuts.add(List.of(Math.min(a, b), Math.max(a, b)))) {
            ip("-n", name(a), "neigh", "replace", address(b), "lladdr", NOWHERE, "dev", "eth0", "nud", "permanent");
            ip("-n", name(b), "neigh", "replace", address(a), "lladdr", NOWHERE, "dev", "eth0", "nud", "permanent");
        }
    }

    /** Restores every path {@link #cut} silenced (neighbours are then resolved afresh). */
    synchronized void healCuts() throws IOException {
        for (List<Integer> pair : cuts) {
            ip("-n", name(pair.get(0)), "neigh", "del", address(pair.get(1)), "dev", "eth0");
            ip("-n", name(pair.get(1)), "neigh", "del", address(pair.get(0)), "dev", "eth0");
        }
        cuts.clear();
    }

    /** Runs {@code command} inside namespace {@code i} and returns its output (stdout and stderr). */
    String runIn(int i, String... command) throws IOException {
        List<String> cmd = new ArrayList<>(exec(i));
        cmd.addAll(List.of(command));
        return run(cmd);
    }

    private String name(int i) {
        return "kvt" + tag + "n" + (i + 1);
    }

    private String hostLink(int i) {
        return "kvt" + tag + "v" + (i + 1);
    }

    private void ip(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        run(cmd);
    }

    private static String run(List<String> cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish within 20 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " exited with " + p.exitValue() + ": " + out.trim());
        }
        return out;
    }

    /** Deletes the namespaces, their links and the bridge; call after the processes inside have ended. */
    @Override
    public void close() {
        for (int i = 0; i < count; i++) {
            quietly("link", "del", hostLink(i));
            quietly("netns", "del", name(i));
        }
        quietly("link", "del", bridge);
    }

    private void quietly(String... args) {
        try {
            ip(args);
        } catch (IOException absent) {
            // never created, or already gone with its namespace
        }
    }
}
