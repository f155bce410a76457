/**
 * RESP2/RESP3 streaming codec: {@link io.kvtier.resp.RespDecoder} turns bytes into commands, streaming large
 * bulk payloads into caller-supplied {@link io.kvtier.resp.BulkSink}s; {@link io.kvtier.resp.RespWriter} encodes
 * replies byte-identically to Redis 7; {@link io.kvtier.resp.RespReplyDecoder} decodes replies for kvtier's own
 * client. Knows nothing of sockets, pipelines or storage.
 */
package io.kvtier.resp;
