package io.kvtier.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.NettyLeakCheck;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link MetricsEndpoint} over real HTTP connections: the password, the bounded connections and request heads, and
 * the timeout that closes a connection which never completes its request while others are served.
 */
@ExtendWith(NettyLeakCheck.class)
class MetricsEndpointTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final List<Socket> sockets = new ArrayList<>();
    private MetricsEndpoint endpoint;

    MetricsEndpointTest() {
        Counter.builder().name("kvtier_test_events").help("test").register(registry).inc(3);
    }

    @AfterEach
    void close() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        if (endpoint != null) {
            endpoint.close();
        }
    }

    private HttpResponse<String> get(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + path))
                .timeout(Duration.ofSeconds(5));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private Socket raw(String sent) throws Exception {
        Socket s = new Socket();
        sockets.add(s);
        s.connect(new InetSocketAddress("127.0.0.1", endpoint.port()), 5000);
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(sent.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return s;
    }

    @Test
    void servesTheRegistryWithoutAPasswordWhenNoneIsSet() throws Exception {
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, null, 10_000);
        HttpResponse<String> r = get("/metrics", null);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        assertThat(r.body()).contains("kvtier_test_events_total 3.0");
        assertThat(get("/nope", null).statusCode()).isEqualTo(404);
    }

    @Test
    void asksForThePasswordWhenOneIsSet() throws Exception {
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, "s3cret", 10_000);
        HttpResponse<String> none = get("/metrics", null);
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Basic realm=\"kvtier\", charset=\"UTF-8\"");
        assertThat(none.body()).doesNotContain("kvtier_test_events");
        assertThat(get("/metrics", basic("default", "wrong")).statusCode()).isEqualTo(401);
        assertThat(get("/metrics", "Bearer wrong").statusCode()).isEqualTo(401);
        assertThat(get("/metrics", "Basic !!!").statusCode()).isEqualTo(401);
        assertThat(get("/metrics", basic("default", "s3cret")).body()).contains("kvtier_test_events_total 3.0");
        assertThat(get("/metrics", basic("prometheus", "s3cret")).statusCode()).as("any user name").isEqualTo(200);
        assertThat(get("/metrics", "Bearer s3cret").statusCode()).isEqualTo(200);
    }

    @Test
    void tenHalfSentRequestsDoNotStopOthersBeingServed() throws Exception {
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, null, 10_000);
        for (int i = 0; i < 10; i++) {
            raw("GET /metrics HTTP/1.1\r\nHost: x\r\n"); // and never the empty line
        }
        for (int i = 0; i < 5; i++) {
            long start = System.nanoTime();
            assertThat(get("/metrics", null).statusCode()).isEqualTo(200);
            assertThat((System.nanoTime() - start) / 1_000_000).as("ms to scrape beside 10 half-sent requests")
                    .isLessThan(2000);
        }
    }

    @Test
    void closesAConnectionThatDoesNotCompleteItsRequestInTime() throws Exception {
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, null, 300);
        Socket slow = raw("GET /metrics HTTP/1.1\r\nHost: x\r\n");
        long start = System.nanoTime();
        assertThat(slow.getInputStream().read()).as("closed without an answer").isEqualTo(-1);
        assertThat((System.nanoTime() - start) / 1_000_000).as("ms until closed").isLessThan(5000);
    }

    @Test
    void servesPipelinedRequestsOnOneConnectionThenClosesWhenAsked() throws Exception {
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, null, 10_000);
        Socket s = raw("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nHEAD /metrics HTTP/1.1\r\nHost: x\r\n"
                + "Connection: close\r\n\r\n");
        String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        assertThat(all.split("HTTP/1.1 200 OK", -1)).hasSize(3);
        assertThat(all).endsWith("Connection: close\r\n\r\n").contains("kvtier_test_events_total 3.0");
    }

    @Test
    void refusesRequestsItDoesNotServe() throws Exception {
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, null, 10_000);
        assertThat(answer(raw("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"))).startsWith("HTTP/1.1 405 ");
        assertThat(answer(raw("garbage\r\n\r\n"))).startsWith("HTTP/1.1 400 ");
        assertThat(answer(raw("GET /metrics HTTP/1.1\r\nX: " + "y".repeat(MetricsExchange.MAX_HEAD_BYTES) + "\r\n")))
                .startsWith("HTTP/1.1 431 ");
    }

    @Test
    void answersConnectionsBeyondTheLimitWith503() throws Exception {
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, null, 10_000);
        for (int i = 0; i < MetricsEndpoint.MAX_CONNECTIONS; i++) {
            raw("GET /metrics HTTP/1.1\r\n");
        }
        assertThat(answer(raw(""))).startsWith("HTTP/1.1 503 ");
        sockets.getFirst().close();
        long deadline = System.nanoTime() + 5_000_000_000L;
        int status;
        do { // the server sees the close a moment later
            status = get("/metrics", null).statusCode();
        } while (status == 503 && System.nanoTime() < deadline);
        assertThat(status).isEqualTo(200);
    }

    private static String answer(Socket s) throws Exception {
        InputStream in = s.getInputStream();
        return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
}
