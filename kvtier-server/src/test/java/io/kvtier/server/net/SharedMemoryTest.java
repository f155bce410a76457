package io.kvtier.server.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import io.kvtier.client.shm.SharedMemoryClient;
import io.kvtier.server.KvtierServer;
import io.kvtier.server.TestNode;
import io.kvtier.server.value.SharedLeases;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KVC.SHM against an in-process server with --shm on real event loops, with a client that maps the server's memfds
 * as a local engine would: exact bytes both ways, a lease that outlives its key, a killed client's leases, the
 * bounds, and GET and SET answering for what shared memory does not take.
 */
class SharedMemoryTest {
    @TempDir
    Path dir;
    private KvtierServer server;
    private ClientResources resources;

    @BeforeEach
    void start() throws Exception {
        server = KvtierServer.start(TestNode.options(dir, null, 100).withSharedMemory(true));
        resources = ClientResources.create(1);
    }

    @AfterEach
    void stop() throws Exception {
        resources.close();
        server.close();
    }

    private RespConnection connect() throws Exception {
        return RespConnection.connect(resources, "127.0.0.1", server.port(),
                new ClientOptions(Duration.ofSeconds(5), Duration.ofSeconds(10))).get();
    }

    private static Reply call(RespConnection c, Object... args) throws Exception {
        return c.send(args).get();
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private SharedLeases leases() {
        return server.context().sharedLeases();
    }

    @Test
    void valuesSavedAndLoadedThroughSharedMemoryAreExactAndGetAndSetSeeThem() throws Exception {
        try (RespConnection c = connect(); SharedMemoryClient shm = SharedMemoryClient.open(c, 10_000)) {
            assertThat(shm.local()).as("same host, same user").isTrue();
            int[] sizes = {0, 1, 100, 4096, 32 * 1024, 32 * 1024 + 1, 65536, 200_000, 1 << 20, (1 << 21) - 5};
            for (int i = 0; i < sizes.length; i++) {
                byte[] v = random(sizes[i], i);
                shm.save(("k" + i).getBytes(), ByteBuffer.wrap(v));
                ByteBuffer out = ByteBuffer.allocateDirect(sizes[i]);
                assertThat(shm.load(("k" + i).getBytes(), out)).isEqualTo(sizes[i]);
                byte[] back = new byte[sizes[i]];
                out.flip().get(back);
                assertThat(back).as("size %d through shared memory", sizes[i]).isEqualTo(v);
                Reply get = call(c, "GET", "k" + i); // and over RESP, as any client sees it
                assertThat(((Reply.Bulk) get).bytes()).isEqualTo(v);
                Reply.release(get);
            }
            byte[] plain = random(300_000, 99);
            Reply set = call(c, "SET", "plain", plain);
            assertThat(set).isEqualTo(new Reply.Simple("OK"));
            ByteBuffer out = ByteBuffer.allocate(plain.length);
            assertThat(shm.load("plain".getBytes(), out)).isEqualTo(plain.length);
            assertThat(out.array()).isEqualTo(plain);
            assertThat(shm.load("missing".getBytes(), ByteBuffer.allocate(10))).isEqualTo(-1);
        }
        TestNodeAwait.until("leases end", () -> leases().held() == 0);
        assertThat(leases().heldBytes()).isZero();
    }

    @Test
    void aValueOnDiskComesOverResp() throws Exception {
        try (RespConnection c = connect(); SharedMemoryClient shm = SharedMemoryClient.open(c, 10_000)) {
            byte[] first = random(1 << 20, 1);
            shm.save("first".getBytes(), ByteBuffer.wrap(first));
            for (int i = 0; i < 12; i++) { // 12 MiB through 4 MiB of memory: first goes to disk
                shm.save(("fill" + i).getBytes(), ByteBuffer.wrap(random(1 << 20, 100 + i)));
            }
            TestNodeAwait.until("first is on disk", () -> server.context().kvcache().residence("first".getBytes())
                    == io.kvtier.store.Residence.DISK);
            Reply lease = call(c, "KVC.SHM.GET", "first");
            assertThat(lease).isInstanceOf(Reply.Bulk.class);
            assertThat(((Reply.Bulk) lease).utf8()).isEqualTo("disk");
            Reply.release(lease);
            ByteBuffer out = ByteBuffer.allocate(first.length);
            assertThat(shm.load("first".getBytes(), out)).isEqualTo(first.length);
            assertThat(out.array()).isEqualTo(first);
        }
    }

    @Test
    void aReadLeaseKeepsTheOldBytesWholeWhileTheKeyIsOverwrittenAndDeleted() throws Exception {
        byte[] old = random(1 << 20, 7);
        try (RespConnection c = connect()) {
            call(c, "SET", "k", old);
            Reply.Aggregate lease = (Reply.Aggregate) call(c, "KVC.SHM.GET", "k");
            long id = ((Reply.Int) lease.elements().get(0)).value();
            for (int round = 0; round < 5; round++) { // overwrites fill memory again and again
                for (int i = 0; i < 4; i++) {
                    call(c, "SET", "k" + i, random(1 << 20, round * 10 + i));
                }
                call(c, "SET", "k", random(1 << 20, 1000 + round));
            }
            call(c, "DEL", "k");
            assertThat(readExtents(c, lease)).as("the leased bytes are the old value, whole").isEqualTo(old);
            assertThat(((Reply.Int) call(c, "KVC.SHM.RELEASE", Long.toString(id))).value()).isEqualTo(1);
            assertThat(((Reply.Int) call(c, "KVC.SHM.RELEASE", Long.toString(id))).value()).as("once").isZero();
            assertThat(call(c, "GET", "k")).isInstanceOf(Reply.Null.class);
        }
    }

    @Test
    void aKilledClientsLeasesAndReservationsEnd() throws Exception {
        long usedBefore;
        try (RespConnection c = connect()) {
            call(c, "SET", "k", random(100_000, 1));
            usedBefore = server.context().store().stats().memoryUsedBytes();
        }
        RespConnection killed = connect();
        for (int i = 0; i < 10; i++) {
            assertThat(call(killed, "KVC.SHM.GET", "k")).isInstanceOf(Reply.Aggregate.class);
        }
        // 10 x 100,000 bytes leased and 40,000 reserved: under a quarter of the 4 MiB budget
        assertThat(call(killed, "KVC.SHM.RESERVE", "new", "40000")).isInstanceOf(Reply.Aggregate.class);
        assertThat(leases().held()).isEqualTo(11);
        assertThat(server.context().store().stats().memoryUsedBytes()).isGreaterThan(usedBefore);
        killed.close(); // the socket closes with nothing released or committed
        TestNodeAwait.until("the leases end with the connection", () -> leases().held() == 0);
        assertThat(leases().heldBytes()).isZero();
        TestNodeAwait.until("the reservation's memory is back",
                () -> server.context().store().stats().memoryUsedBytes() == usedBefore);
        try (RespConnection c = connect()) {
            assertThat(call(c, "EXISTS", "new")).isEqualTo(new Reply.Int(0));
        }
    }

    @Test
    void leasesAreBoundedPerClientAndReservationsByTheMemoryBudget() throws Exception {
        try (RespConnection c = connect()) {
            call(c, "SET", "k", "v");
            c.autoFlush(false);
            List<java.util.concurrent.CompletableFuture<Reply>> replies = new ArrayList<>();
            for (int i = 0; i < SharedLeases.MAX_PER_CLIENT + 1; i++) {
                replies.add(c.send("KVC.SHM.GET", "k"));
            }
            c.flush();
            c.autoFlush(true);
            for (int i = 0; i < SharedLeases.MAX_PER_CLIENT; i++) {
                assertThat(replies.get(i).get()).isInstanceOf(Reply.Aggregate.class);
            }
            Reply over = replies.get(SharedLeases.MAX_PER_CLIENT).get();
            assertThat(over).isInstanceOf(Reply.Error.class);
            assertThat(((Reply.Error) over).message()).startsWith("LEASEFULL");
            try (RespConnection other = connect()) { // another client is not starved by this one's leases
                assertThat(call(other, "KVC.SHM.GET", "k")).isInstanceOf(Reply.Aggregate.class);
                // 4 MiB of memory: a quarter, 1 MiB, may be reserved by one client
                assertThat(call(other, "KVC.SHM.RESERVE", "a", Integer.toString(600_000)))
                        .isInstanceOf(Reply.Aggregate.class);
                Reply second = call(other, "KVC.SHM.RESERVE", "b", Integer.toString(600_000));
                assertThat(((Reply.Error) second).message()).startsWith("LEASEFULL").contains("quarter");
            }
        }
    }

    @Test
    void badRequestsGetClearErrors() throws Exception {
        try (RespConnection c = connect()) {
            assertThat(error(call(c, "KVC.SHM.COMMIT", "12345"))).contains("no write lease 12345");
            assertThat(error(call(c, "KVC.SHM.RESERVE", "k", "-1"))).contains("outside 0..");
            assertThat(error(call(c, "KVC.SHM.RESERVE", "k", Long.toString(3L << 20)))).contains("--max-value");
            assertThat(error(call(c, "KVC.SHM.SLAB", "999"))).contains("no slab 999");
            assertThat(call(c, "KVC.SHM.RELEASE", "1", "2")).isEqualTo(new Reply.Aggregate('*',
                    List.of(new Reply.Int(0), new Reply.Int(0))));
            Reply.Aggregate lease = (Reply.Aggregate) call(c, "KVC.SHM.RESERVE", "k", "10");
            try (RespConnection other = connect()) {
                String id = Long.toString(((Reply.Int) lease.elements().get(0)).value());
                assertThat(error(call(other, "KVC.SHM.COMMIT", id))).as("another connection's lease")
                        .contains("no write lease");
                assertThat(call(other, "KVC.SHM.RELEASE", id)).isEqualTo(new Reply.Int(0));
            }
        }
    }

    @Test
    void aServerWithoutSharedMemorySaysSoAndTheClientUsesResp() throws Exception {
        try (KvtierServer plain = KvtierServer.start(TestNode.options(dir.resolve("plain"), null, 10));
                RespConnection c = RespConnection.connect(resources, "127.0.0.1", plain.port(),
                        ClientOptions.defaults()).get();
                SharedMemoryClient shm = SharedMemoryClient.open(c, 10_000)) {
            assertThat(error(call(c, "KVC.SHM.HELLO"))).contains("--shm yes");
            assertThat(shm.local()).isFalse();
            byte[] v = random(70_000, 3);
            shm.save("k".getBytes(), ByteBuffer.wrap(v));
            ByteBuffer out = ByteBuffer.allocate(v.length);
            assertThat(shm.load("k".getBytes(), out)).isEqualTo(v.length);
            assertThat(out.array()).isEqualTo(v);
        }
    }

    @Test
    void withAPasswordTheCommandsNeedAuth() throws Exception {
        try (KvtierServer locked = KvtierServer.start(TestNode.options(dir.resolve("locked"), "secret", 10)
                .withSharedMemory(true));
                RespConnection c = RespConnection.connect(resources, "127.0.0.1", locked.port(),
                        ClientOptions.defaults()).get()) {
            assertThat(error(call(c, "KVC.SHM.HELLO"))).startsWith("NOAUTH");
            assertThat(error(call(c, "KVC.SHM.GET", "k"))).startsWith("NOAUTH");
            assertThat(error(call(c, "KVC.SHM.RESERVE", "k", "10"))).startsWith("NOAUTH");
            assertThat(call(c, "AUTH", "secret")).isEqualTo(new Reply.Simple("OK"));
            try (SharedMemoryClient shm = SharedMemoryClient.open(c, 10_000)) {
                assertThat(shm.local()).isTrue();
            }
        }
    }

    private static String error(Reply r) {
        assertThat(r).isInstanceOf(Reply.Error.class);
        return ((Reply.Error) r).message();
    }

    /** Reads a lease's extents straight from the slabs, as a client's mapping sees them. */
    private static byte[] readExtents(RespConnection c, Reply.Aggregate lease) throws Exception {
        List<Reply> e = lease.elements();
        int length = (int) ((Reply.Int) e.get(1)).value();
        byte[] out = new byte[length];
        int at = 0;
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 2; i + 2 < e.size(); i += 3) {
                long slab = ((Reply.Int) e.get(i)).value();
                long offset = ((Reply.Int) e.get(i + 1)).value();
                int len = (int) ((Reply.Int) e.get(i + 2)).value();
                Reply.Aggregate where = (Reply.Aggregate) call(c, "KVC.SHM.SLAB", Long.toString(slab));
                String path = ((Reply.Bulk) where.elements().get(0)).utf8();
                Reply.release(where);
                try (FileChannel ch = FileChannel.open(Path.of(path), StandardOpenOption.READ)) {
                    MemorySegment m = ch.map(FileChannel.MapMode.READ_ONLY, offset, len, arena);
                    MemorySegment.copy(m, 0, MemorySegment.ofArray(out), at, len);
                }
                at += len;
            }
        }
        return out;
    }

    /** Polls a condition the server's threads make true. */
    static final class TestNodeAwait {
        static void until(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!condition.getAsBoolean()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out waiting until " + what);
                }
                Thread.sleep(5);
            }
        }
    }
}
