package io.kvtier.server.metrics;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Locale;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP/1.1 connection to {@link MetricsEndpoint}: reads request heads (GET or HEAD, no body) of at most
 * {@link #MAX_HEAD_BYTES}, answers each in turn (keep-alive and pipelining as HTTP/1.1 allows), and closes the
 * connection when a request is malformed, too large or not a GET/HEAD, when the client asks, or when no complete
 * request arrives within the timeout (from the connection's start or the previous response).
 * Event-loop confined.
 */
final class MetricsExchange extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(MetricsExchange.class);
    /** Request line and headers; a Prometheus scrape sends about 300 bytes. */
    static final int MAX_HEAD_BYTES = 8192;
    private static final ExpositionFormats FORMATS = ExpositionFormats.init();

    /** What every connection of one endpoint shares. */
    record Settings(PrometheusRegistry registry, String password, long requestTimeoutMillis, int maxConnections,
                    AtomicInteger connections) {
    }

    private final Settings settings;
    private ByteBuf head;
    private ScheduledFuture<?> deadline;
    private boolean counted;
    private boolean closing;

    MetricsExchange(Settings settings) {
        this.settings = settings;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        counted = true;
        if (settings.connections().incrementAndGet() > settings.maxConnections()) {
            text(ctx, 503, "Service Unavailable", "more than " + settings.maxConnections() + " connections\n", false,
                    true);
            return;
        }
        armDeadline(ctx);
    }

    private void armDeadline(ChannelHandlerContext ctx) {
        if (deadline != null) {
            deadline.cancel(false);
        }
        deadline = ctx.executor().schedule(() -> {
            log.debug("metrics connection {}: no complete request within {} ms, closing", ctx.channel().remoteAddress(),
                    settings.requestTimeoutMillis());
            ctx.close();
        }, settings.requestTimeoutMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (closing) {
            in.release();
            return;
        }
        head = head == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), head, in);
        while (!closing && head != null && head.isReadable()) {
            int end = endOfHead(head);
            if (end < 0) {
                if (head.readableBytes() > MAX_HEAD_BYTES) {
                    text(ctx, 431, "Request Header Fields Too Large", "request head over " + MAX_HEAD_BYTES
                            + " bytes\n", false, true);
                }
                break;
            }
            int length = end - head.readerIndex();
            String text = head.readCharSequence(length, StandardCharsets.ISO_8859_1).toString();
            if (length > MAX_HEAD_BYTES) {
                text(ctx, 431, "Request Header Fields Too Large", "request head over " + MAX_HEAD_BYTES + " bytes\n",
                        false, true);
                break;
            }
            serve(ctx, HttpHead.parse(text));
        }
        if (head != null && !head.isReadable()) {
            head.release();
            head = null;
        } else if (head != null) {
            head.discardSomeReadBytes();
        }
    }

    /**
     * The index just past the empty line ending the request head in {@code in} (HTTP/1.1 ends lines with CRLF,
     * RFC 9112), or -1; looks no further than {@link #MAX_HEAD_BYTES}.
     */
    static int endOfHead(ByteBuf in) {
        int last = Math.min(in.writerIndex(), in.readerIndex() + MAX_HEAD_BYTES + 4);
        for (int i = in.readerIndex() + 3; i < last; i++) {
            if (in.getByte(i) == '\n' && in.getByte(i - 1) == '\r' && in.getByte(i - 2) == '\n'
                    && in.getByte(i - 3) == '\r') {
                return i + 1;
            }
        }
        return -1;
    }

    private void serve(ChannelHandlerContext ctx, HttpHead request) {
        if (request == null) {
            text(ctx, 400, "Bad Request", "malformed request\n", false, true);
            return;
        }
        boolean head = request.method().equals("HEAD");
        boolean close = !request.keepAlive();
        if (!head && !request.method().equals("GET") || request.hasBody()) {
            text(ctx, 405, "Method Not Allowed", "only GET and HEAD, without a body\n", false, true);
        } else if (!authorized(request.authorization())) {
            text(ctx, 401, "Unauthorized", "the metrics need the password\n", head, close);
        } else if (!request.path().equals("/metrics") && !request.path().equals("/")) {
            text(ctx, 404, "Not Found", "try /metrics\n", head, close);
        } else {
            scrape(ctx, request, head, close);
        }
        if (!closing) {
            armDeadline(ctx);
        }
    }

    private void scrape(ChannelHandlerContext ctx, HttpHead request, boolean headOnly, boolean close) {
        ExpositionFormatWriter writer = FORMATS.findWriter(request.accept());
        ByteArrayOutputStream body = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(body, settings.registry().scrape());
        } catch (IOException | RuntimeException e) {
            log.warn("scraping the metrics failed", e);
            text(ctx, 500, "Internal Server Error", e + "\n", headOnly, true);
            return;
        }
        respond(ctx, 200, "OK", writer.getContentType(), body.toByteArray(), headOnly, close);
    }

    /** HTTP Basic with the password (any user name), or a Bearer token equal to it; always true without a password. */
    private boolean authorized(String authorization) {
        if (settings.password() == null) {
            return true;
        }
        if (authorization == null) {
            return false;
        }
        byte[] offered;
        String a = authorization.trim();
        if (a.regionMatches(true, 0, "Basic ", 0, 6)) {
            byte[] pair;
            try {
                pair = Base64.getDecoder().decode(a.substring(6).trim());
            } catch (IllegalArgumentException e) {
                return false;
            }
            int colon = 0;
            while (colon < pair.length && pair[colon] != ':') {
                colon++;
            }
            if (colon == pair.length) {
                return false;
            }
            offered = java.util.Arrays.copyOfRange(pair, colon + 1, pair.length);
        } else if (a.regionMatches(true, 0, "Bearer ", 0, 7)) {
            offered = a.substring(7).trim().getBytes(StandardCharsets.UTF_8);
        } else {
            return false;
        }
        return MessageDigest.isEqual(settings.password().getBytes(StandardCharsets.UTF_8), offered);
    }

    private void text(ChannelHandlerContext ctx, int status, String reason, String message, boolean headOnly,
                      boolean close) {
        respond(ctx, status, reason, "text/plain; charset=utf-8", message.getBytes(StandardCharsets.UTF_8), headOnly,
                close);
    }

    private void respond(ChannelHandlerContext ctx, int status, String reason, String contentType, byte[] body,
                         boolean headOnly, boolean close) {
        StringBuilder h = new StringBuilder(160).append("HTTP/1.1 ").append(status).append(' ').append(reason)
                .append("\r\nContent-Type: ").append(contentType)
                .append("\r\nContent-Length: ").append(body.length);
        if (status == 401) {
            h.append("\r\nWWW-Authenticate: Basic realm=\"kvtier\", charset=\"UTF-8\"");
        }
        h.append(close ? "\r\nConnection: close\r\n\r\n" : "\r\n\r\n");
        ByteBuf out = Unpooled.wrappedBuffer(h.toString().getBytes(StandardCharsets.ISO_8859_1));
        if (!headOnly && body.length > 0) {
            out = Unpooled.wrappedBuffer(out, Unpooled.wrappedBuffer(body));
        }
        if (close) {
            closing = true;
            ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.writeAndFlush(out);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closing = true;
        if (counted) {
            settings.connections().decrementAndGet();
            counted = false;
        }
        if (deadline != null) {
            deadline.cancel(false);
        }
        if (head != null) {
            head.release();
            head = null;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("metrics connection {}: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }

    /** The parts of a request head the endpoint reads. */
    record HttpHead(String method, String path, boolean keepAlive, boolean hasBody, String authorization,
                    String accept) {
        /** Parses a request head ending with its empty line; null if it is not HTTP/1.x. */
        static HttpHead parse(String text) {
            String[] lines = text.split("\r?\n");
            String[] start = lines.length == 0 ? new String[0] : lines[0].split(" ");
            if (start.length != 3 || !start[2].startsWith("HTTP/1.")) {
                return null;
            }
            boolean keepAlive = start[2].equals("HTTP/1.1");
            boolean body = false;
            String authorization = null;
            String accept = null;
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = lines[i].substring(colon + 1).trim();
                switch (name) {
                    case "connection" -> keepAlive = connectionKeepsAlive(value, keepAlive);
                    case "content-length" -> body |= !value.equals("0");
                    case "transfer-encoding" -> body = true;
                    case "authorization" -> authorization = value;
                    case "accept" -> accept = value;
                    default -> { }
                }
            }
            String target = start[1];
            int query = target.indexOf('?');
            return new HttpHead(start[0], query < 0 ? target : target.substring(0, query), keepAlive, body,
                    authorization, accept);
        }

        private static boolean connectionKeepsAlive(String value, boolean otherwise) {
            String v = value.toLowerCase(Locale.ROOT);
            return v.contains("close") ? false : v.contains("keep-alive") || otherwise;
        }
    }
}
