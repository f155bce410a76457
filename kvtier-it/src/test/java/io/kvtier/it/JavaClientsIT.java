package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import glide.api.GlideClient;
import glide.api.models.Batch;
import glide.api.models.GlideString;
import glide.api.models.commands.GetExOptions;
import glide.api.models.commands.SetOptions;
import glide.api.models.commands.scan.ScanOptions;
import glide.api.models.configuration.GlideClientConfiguration;
import glide.api.models.configuration.NodeAddress;
import io.kvtier.testkit.RedisServerProcess;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.GetExArgs;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.protocol.ProtocolVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.Transaction;
import redis.clients.jedis.params.GetExParams;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Jedis and Lettuce, each in RESP2 and RESP3, and valkey-glide's standalone client run the same script of what applications do (strings with options, a
 * 2 MiB binary value, multi-key commands, transactions with a run-time error and with WATCH broken by another client,
 * a pipeline, SCAN, KEYS, INFO, client names, an unknown command) against redis-server 7.0 and against kvtier: every
 * step must give the same result (values, or the exception's class and message).
 */
class JavaClientsIT {
    private static final byte[] BIG = big();

    @TempDir
    Path tmp;

    @Test
    void jedisAndLettuceBehaveAsAgainstRedis() throws Exception {
        Map<String, String> fromRedis;
        try (RedisServerProcess redis = RedisServerProcess.start(Files.createDirectories(tmp.resolve("redis")))) {
            fromRedis = runAll(redis.port());
        }
        Map<String, String> fromKvtier;
        try (KvtierProcess kvtier = KvtierProcess.start(tmp.resolve("kvtier"), "--memory", "64m")) {
            fromKvtier = runAll(kvtier.port());
        }
        assertThat(fromKvtier).containsExactlyEntriesOf(fromRedis);
        assertThat(fromKvtier.get("jedis-RESP3 watch_broken")).isEqualTo("null");
        assertThat(fromKvtier.get("lettuce-RESP2 watch_broken")).isEqualTo("discarded=true");
    }

    private static Map<String, String> runAll(int port) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        for (RedisProtocol protocol : new RedisProtocol[] {RedisProtocol.RESP2, RedisProtocol.RESP3}) {
            jedis(port, protocol, out);
        }
        for (ProtocolVersion protocol : new ProtocolVersion[] {ProtocolVersion.RESP2, ProtocolVersion.RESP3}) {
            lettuce(port, protocol, out);
        }
        glide(port, out);
        return out;
    }

    private static void step(Map<String, String> out, String name, Callable<Object> body) {
        String result;
        try {
            result = render(body.call());
        } catch (Exception e) {
            result = render(e instanceof java.util.concurrent.ExecutionException && e.getCause() != null
                    ? e.getCause() : e);
        }
        out.put(name, result);
    }

    private static String render(Object o) {
        if (o instanceof Throwable t) {
            return t.getClass().getSimpleName() + ": " + t.getMessage();
        }
        if (o instanceof byte[] b) {
            return b.length < 64 ? new String(b, StandardCharsets.UTF_8) : "<" + b.length + " bytes " + sha1(b) + ">";
        }
        if (o instanceof GlideString g) {
            return render(g.getBytes());
        }
        if (o instanceof Object[] array) {
            return render(Arrays.asList(array));
        }
        if (o instanceof java.util.concurrent.ExecutionException e && e.getCause() != null) {
            return render(e.getCause());
        }
        if (o instanceof List<?> list) {
            List<String> items = new ArrayList<>();
            for (Object x : list) {
                items.add(render(x));
            }
            return items.toString();
        }
        return String.valueOf(o);
    }

    private static void jedis(int port, RedisProtocol protocol, Map<String, String> out) {
        String p = "jedis-" + protocol + " ";
        DefaultJedisClientConfig config = DefaultJedisClientConfig.builder().protocol(protocol)
                .socketTimeoutMillis(30_000).build();
        try (Jedis j = new Jedis(new HostAndPort("127.0.0.1", port), config);
             Jedis other = new Jedis(new HostAndPort("127.0.0.1", port), config)) {
            step(out, p + "flush", j::flushAll);
            step(out, p + "set_get", () -> List.of(j.set("j:a", "v1"), j.get("j:a"), String.valueOf(j.get("j:no"))));
            step(out, p + "set_options", () -> List.of(j.setGet("j:a", "v2", SetParams.setParams().xx()),
                    String.valueOf(j.set("j:a", "x", SetParams.setParams().nx())),
                    j.set("j:ttl", "v", SetParams.setParams().ex(100)), j.ttl("j:ttl"), j.pttl("j:ttl") > 99_000));
            step(out, p + "binary", () -> {
                j.set("j:big".getBytes(StandardCharsets.UTF_8), BIG);
                return List.of(j.get("j:big".getBytes(StandardCharsets.UTF_8)), j.strlen("j:big"),
                        j.getrange("j:big", 0, 9));
            });
            step(out, p + "multi_keys", () -> List.of(j.mset("j:m1", "1", "j:m2", "2"),
                    j.mget("j:m1", "j:m2", "j:no"), j.exists("j:m1", "j:m2", "j:no"), j.del("j:m1", "j:no"),
                    j.getDel("j:m2"), j.getEx("j:a", GetExParams.getExParams().px(5000)), j.type("j:a"),
                    j.persist("j:a"), j.ttl("j:a"), j.expire("j:a", 50), j.touch("j:a", "j:no")));
            step(out, p + "transaction", () -> {
                Transaction t = j.multi();
                t.set("j:t", "1");
                t.get("j:t");
                t.strlen("j:t");
                return t.exec();
            });
            step(out, p + "transaction_error", () -> {
                Transaction t = j.multi();
                t.set("j:t", "1");
                t.sendCommand(Protocol.Command.SET, "j:t", "2", "XX", "NX");
                t.get("j:t");
                return t.exec();
            });
            step(out, p + "watch_broken", () -> {
                j.watch("j:w");
                other.set("j:w", "changed");
                Transaction t = j.multi();
                t.set("j:w", "mine");
                return t.exec();
            });
            step(out, p + "discard", () -> {
                Transaction t = j.multi();
                t.set("j:d", "never");
                return List.of(t.discard(), String.valueOf(j.get("j:d")));
            });
            step(out, p + "pipeline", () -> {
                Pipeline pipe = j.pipelined();
                pipe.set("j:p", "1");
                pipe.get("j:p");
                pipe.del("j:p");
                return pipe.syncAndReturnAll();
            });
            step(out, p + "scan", () -> {
                List<String> keys = new ArrayList<>();
                String cursor = ScanParams.SCAN_POINTER_START;
                do {
                    ScanResult<String> r = j.scan(cursor, new ScanParams().match("j:*").count(100));
                    keys.addAll(r.getResult());
                    cursor = r.getCursor();
                } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
                return keys.stream().sorted().toList();
            });
            step(out, p + "keys", () -> j.keys("j:*").stream().sorted().toList());
            step(out, p + "role", () -> j.info("replication").contains("role:master"));
            step(out, p + "client_name", () -> List.of(j.clientSetname("jedis-it"), j.clientGetname()));
            step(out, p + "unknown", () -> j.sendCommand(() -> "NOSUCHCOMMAND".getBytes(StandardCharsets.UTF_8), "x"));
            step(out, p + "cleanup", () -> j.del("j:a", "j:ttl", "j:big", "j:t", "j:w"));
        }
    }

    private static void lettuce(int port, ProtocolVersion protocol, Map<String, String> out) {
        String p = "lettuce-" + protocol + " ";
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        client.setOptions(ClientOptions.builder().protocolVersion(protocol).build());
        try (StatefulRedisConnection<String, String> conn = client.connect();
             StatefulRedisConnection<String, String> otherConn = client.connect();
             StatefulRedisConnection<byte[], byte[]> binary = client.connect(ByteArrayCodec.INSTANCE)) {
            RedisCommands<String, String> l = conn.sync();
            step(out, p + "flush", l::flushall);
            step(out, p + "set_get", () -> List.of(l.set("l:a", "v1"), l.get("l:a"), String.valueOf(l.get("l:no"))));
            step(out, p + "set_options", () -> List.of(l.setGet("l:a", "v2", SetArgs.Builder.xx()),
                    String.valueOf(l.set("l:a", "x", SetArgs.Builder.nx())), l.set("l:ttl", "v", SetArgs.Builder.ex(100)),
                    l.ttl("l:ttl"), l.pttl("l:ttl") > 99_000));
            step(out, p + "binary", () -> {
                binary.sync().set("l:big".getBytes(StandardCharsets.UTF_8), BIG);
                return List.of(binary.sync().get("l:big".getBytes(StandardCharsets.UTF_8)), l.strlen("l:big"),
                        l.getrange("l:big", 0, 9));
            });
            step(out, p + "multi_keys", () -> List.of(l.mset(Map.of("l:m1", "1", "l:m2", "2")),
                    l.mget("l:m1", "l:m2", "l:no").stream().map(kv -> kv.getValueOrElse("(nil)")).toList(),
                    l.exists("l:m1", "l:m2", "l:no"), l.del("l:m1", "l:no"), l.getdel("l:m2"),
                    l.getex("l:a", GetExArgs.Builder.px(5000)), l.type("l:a"), l.persist("l:a"), l.ttl("l:a"),
                    l.expire("l:a", 50), l.touch("l:a", "l:no")));
            step(out, p + "transaction", () -> {
                l.multi();
                l.set("l:t", "1");
                l.get("l:t");
                l.strlen("l:t");
                return l.exec().stream().toList();
            });
            step(out, p + "transaction_error", () -> {
                l.multi();
                l.set("l:t", "1");
                l.dispatch(keyword("SET"), new StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8),
                        new CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8).addKey("l:t").addValue("2")
                                .add("XX").add("NX"));
                l.get("l:t");
                return l.exec().stream().toList();
            });
            step(out, p + "watch_broken", () -> {
                l.watch("l:w");
                otherConn.sync().set("l:w", "changed");
                l.multi();
                l.set("l:w", "mine");
                return "discarded=" + l.exec().wasDiscarded();
            });
            step(out, p + "discard", () -> {
                l.multi();
                l.set("l:d", "never");
                return List.of(l.discard(), String.valueOf(l.get("l:d")));
            });
            step(out, p + "scan", () -> {
                List<String> keys = new ArrayList<>();
                ScanCursor cursor = ScanCursor.INITIAL;
                do {
                    KeyScanCursor<String> r = l.scan(cursor, ScanArgs.Builder.matches("l:*").limit(100));
                    keys.addAll(r.getKeys());
                    cursor = r;
                } while (!cursor.isFinished());
                return keys.stream().sorted().toList();
            });
            step(out, p + "keys", () -> l.keys("l:*").stream().sorted().toList());
            step(out, p + "role", () -> l.info("replication").contains("role:master"));
            step(out, p + "client_name", () -> List.of(l.clientSetname("lettuce-it"), l.clientGetname()));
            step(out, p + "unknown", () -> l.dispatch(keyword("NOSUCHCOMMAND"),
                    new StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8),
                    new CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8).add("x")));
            step(out, p + "cleanup", () -> l.del("l:a", "l:ttl", "l:big", "l:t", "l:w"));
        } finally {
            client.shutdown();
        }
    }

    /** valkey-glide 2.3 (its Rust core, RESP3): standalone client; batches with {@code atomic} are MULTI/EXEC. */
    private static void glide(int port, Map<String, String> out) throws Exception {
        String p = "glide ";
        GlideClientConfiguration config = GlideClientConfiguration.builder()
                .address(NodeAddress.builder().host("127.0.0.1").port(port).build()).requestTimeout(30_000).build();
        try (GlideClient g = GlideClient.createClient(config).get(30, TimeUnit.SECONDS);
             GlideClient other = GlideClient.createClient(config).get(30, TimeUnit.SECONDS)) {
            step(out, p + "flush", () -> g.customCommand(new String[] {"FLUSHALL"}).get());
            step(out, p + "set_get", () -> List.of(g.set("g:a", "v1").get(), g.get("g:a").get(),
                    String.valueOf(g.get("g:no").get())));
            step(out, p + "set_options", () -> List.of(
                    g.set("g:a", "v2", SetOptions.builder().conditionalSetOnlyIfExists().returnOldValue(true).build())
                            .get(),
                    String.valueOf(g.set("g:a", "x", SetOptions.builder().conditionalSetOnlyIfNotExist().build())
                            .get()),
                    g.set("g:ttl", "v", SetOptions.builder().expiry(SetOptions.Expiry.Seconds(100L)).build()).get(),
                    g.ttl("g:ttl").get(), g.pttl("g:ttl").get() > 99_000));
            step(out, p + "binary", () -> {
                g.set(GlideString.of("g:big"), GlideString.of(BIG)).get();
                return List.of(g.get(GlideString.of("g:big")).get(), g.strlen("g:big").get());
            });
            step(out, p + "multi_keys", () -> List.of(g.mset(Map.of("g:m1", "1", "g:m2", "2")).get(),
                    Arrays.asList(g.mget(new String[] {"g:m1", "g:m2", "g:no"}).get()),
                    g.exists(new String[] {"g:m1", "g:m2", "g:no"}).get(), g.del(new String[] {"g:m1", "g:no"}).get(),
                    g.getdel("g:m2").get(), g.getex("g:a", GetExOptions.Milliseconds(5000L)).get(),
                    g.expire("g:a", 50).get(), g.ttl("g:a").get()));
            step(out, p + "transaction", () -> g.exec(new Batch(true).set("g:t", "1").get("g:t").strlen("g:t"),
                    false).get());
            step(out, p + "transaction_error", () -> g.exec(new Batch(true).set("g:t", "1")
                    .customCommand(new String[] {"SET", "g:t", "2", "XX", "NX"}).get("g:t"), false).get());
            step(out, p + "watch_broken", () -> {
                g.watch(new String[] {"g:w"}).get();
                other.set("g:w", "changed").get();
                return String.valueOf(Arrays.toString(g.exec(new Batch(true).set("g:w", "mine"), false).get()));
            });
            step(out, p + "pipeline", () -> g.exec(new Batch(false).set("g:p", "1").get("g:p")
                    .customCommand(new String[] {"DEL", "g:p"}), false).get());
            step(out, p + "scan", () -> {
                List<String> keys = new ArrayList<>();
                String cursor = "0";
                do {
                    Object[] r = g.scan(cursor, ScanOptions.builder().matchPattern("g:*").count(100L).build()).get();
                    cursor = String.valueOf(r[0]);
                    for (Object k : (Object[]) r[1]) {
                        keys.add(String.valueOf(k));
                    }
                } while (!cursor.equals("0"));
                return keys.stream().sorted().toList();
            });
            step(out, p + "role", () -> g.info().get().contains("role:master"));
            step(out, p + "client_name", () -> List.of(g.customCommand(new String[] {"CLIENT", "SETNAME", "glide-it"})
                    .get(), g.clientGetName().get()));
            step(out, p + "unknown", () -> g.customCommand(new String[] {"NOSUCHCOMMAND", "x"}).get());
            step(out, p + "cleanup", () -> g.del(new String[] {"g:a", "g:ttl", "g:big", "g:t", "g:w"}).get());
        }
    }

    private static ProtocolKeyword keyword(String name) {
        byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        return new ProtocolKeyword() {
            @Override
            public byte[] getBytes() {
                return bytes;
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    private static byte[] big() {
        byte[] b = new byte[2 << 20];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 31 + (i >>> 11));
        }
        return b;
    }

    private static String sha1(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(b));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
