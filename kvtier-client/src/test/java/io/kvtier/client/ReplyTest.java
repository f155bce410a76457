package io.kvtier.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.NettyLeakCheck;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NettyLeakCheck.class)
class ReplyTest {
    private static ByteBuf buffer(String text) {
        return Unpooled.directBuffer().writeBytes(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void releasesEveryBulkInsideNestedAggregates() {
        ByteBuf a = buffer("a");
        ByteBuf b = buffer("b");
        Reply reply = new Reply.Aggregate('*', List.of(new Reply.Bulk(a), new Reply.Int(1),
                new Reply.Aggregate('%', List.of(new Reply.Simple("k"), new Reply.Bulk(b)))));

        Reply.release(reply);

        assertThat(a.refCnt()).isZero();
        assertThat(b.refCnt()).isZero();
    }

    @Test
    void releasesABulkOnlyOnceWhenReleasedTwice() {
        ByteBuf a = buffer("a");
        Reply reply = new Reply.Aggregate('*', List.of(new Reply.Bulk(a)));

        Reply.release(reply);
        Reply.release(reply);

        assertThat(a.refCnt()).isZero();
    }

    @Test
    void ignoresRepliesWithoutBulksAndNull() {
        Reply.release(null);
        Reply.release(new Reply.Null());
        Reply.release(new Reply.Error("ERR x"));
        Reply.release(new Reply.Other(',', "1.5"));
    }

    @Test
    void copiesAndDecodesABulkWithoutReleasingIt() {
        Reply.Bulk bulk = new Reply.Bulk(buffer("héllo"));

        assertThat(bulk.utf8()).isEqualTo("héllo");
        assertThat(bulk.bytes()).isEqualTo("héllo".getBytes(StandardCharsets.UTF_8));
        assertThat(bulk.content().refCnt()).isEqualTo(1);
        Reply.release(bulk);
    }
}
