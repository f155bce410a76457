"""Writes the golden vLLM KV-event streams that VllmEventsTest replays (kvtier-router/src/test/resources/vllm-events).

Encoded by msgspec itself (the library vLLM encodes its events with), from struct shapes declared here after vLLM's
vllm/distributed/kv_events.py, one shape per wire layout seen in vLLM releases:
  array-v0.11   events as positional arrays: tag, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium
  array-v0.15   + lora_name
  array-v0.23   + extra_keys, group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window (BlockRemoved + group_idx)
  map-v0.26     events as maps keyed by field name ("type" = the tag), defaults left out; the batch stays an array
  map-v0.27     + locality, ownership (BlockStored, BlockRemoved) and session_id (BlockStored): "-tiers" streams
Block hashes are ints (vLLM's default, VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1: the digest's last 8 bytes as an
unsigned int, so half of them are 2^63 or more) or, with "-bytes" in the name, raw 32-byte sha256 digests.

Each output line is one ZMQ message as vLLM's publisher sends it: topic, sequence number (8 bytes big-endian) and
payload, hex, separated by spaces. Run: python3 -m venv /tmp/v && /tmp/v/bin/pip install msgspec==0.22.0 &&
/tmp/v/bin/python kvtier-router/src/test/python/vllm_events.py kvtier-router/src/test/resources/vllm-events
"""
import hashlib
import os
import sys
from typing import Any

import msgspec


def shapes(layout):
    array = layout.startswith("array")
    full = layout in ("array-v0.23", "map-v0.26", "map-v0.27")
    tiers = layout == "map-v0.27"

    class EventBatch(msgspec.Struct, array_like=True, omit_defaults=True, gc=False):
        ts: float
        events: list[Any]
        data_parallel_rank: int | None = None

    class KVCacheEvent(msgspec.Struct, array_like=array, omit_defaults=True, gc=False, tag=True):
        pass

    if layout == "array-v0.11":
        class BlockStored(KVCacheEvent):
            block_hashes: list[bytes | int]
            parent_block_hash: bytes | int | None
            token_ids: list[int]
            block_size: int
            lora_id: int | None
            medium: str | None
    elif layout == "array-v0.15":
        class BlockStored(KVCacheEvent):
            block_hashes: list[bytes | int]
            parent_block_hash: bytes | int | None
            token_ids: list[int]
            block_size: int
            lora_id: int | None
            medium: str | None
            lora_name: str | None
    else:
        class BlockStored(KVCacheEvent):
            block_hashes: list[bytes | int]
            parent_block_hash: bytes | int | None
            token_ids: list[int]
            block_size: int
            lora_id: int | None
            medium: str | None
            lora_name: str | None
            extra_keys: list[tuple[Any, ...] | None] | None = None
            group_idx: int | None = None
            kv_cache_spec_kind: str | None = None
            kv_cache_spec_sliding_window: int | None = None
            if tiers:
                locality: str | None = None
                ownership: str | None = None
                session_id: str | None = None

    if full:
        class BlockRemoved(KVCacheEvent):
            block_hashes: list[bytes | int]
            medium: str | None
            group_idx: int | None = None
            if tiers:
                locality: str | None = None
                ownership: str | None = None
    else:
        class BlockRemoved(KVCacheEvent):
            block_hashes: list[bytes | int]
            medium: str | None

    class AllBlocksCleared(KVCacheEvent):
        pass

    class KVEventBatch(EventBatch):
        events: list[BlockStored | BlockRemoved | AllBlocksCleared]

    return KVEventBatch, BlockStored, BlockRemoved, AllBlocksCleared


def block_hash(name, as_bytes):
    digest = hashlib.sha256(name.encode()).digest()
    return digest if as_bytes else int.from_bytes(digest, "big") & (2**64 - 1)


def stream(layout, as_bytes):
    """The story VllmEventsTest checks: stores, a chained store, a LoRA prompt, a removal, CPU offload, a clear."""
    Batch, Stored, Removed, Cleared = shapes(layout)
    full = layout in ("array-v0.23", "map-v0.26")
    h = {n: block_hash(n, as_bytes) for n in ("a1", "a2", "a3", "l1", "c1", "c2", "b1")}

    def stored(hashes, parent, tokens, medium="GPU", lora=None):
        kw = dict(block_hashes=[h[x] for x in hashes], parent_block_hash=None if parent is None else h[parent],
                  token_ids=tokens, block_size=4, lora_id=None if lora is None else 1, medium=medium)
        if layout != "array-v0.11":
            kw["lora_name"] = lora
        if full:
            kw.update(extra_keys=[None] * len(hashes), group_idx=0, kv_cache_spec_kind="full_attention")
        return Stored(**kw)

    def removed(hashes, medium="GPU"):
        kw = dict(block_hashes=[h[x] for x in hashes], medium=medium)
        if full:
            kw["group_idx"] = 0
        return Removed(**kw)

    ts = 1764028800.25
    batches = [
        [stored(["a1", "a2"], None, list(range(1, 9)))],                      # prompt A, blocks 1-2
        [stored(["a3"], "a2", [9, 10, 11, 12])],                              # prompt A, block 3
        [stored(["l1"], None, list(range(1, 5)), lora="sql-adapter")],        # prompt A's block 1 under a LoRA
        [removed(["a2"])],                                                    # A's block 2 evicted
        [stored(["c1", "c2"], None, list(range(1, 9)), medium="CPU"),         # A's blocks 1-2 offloaded to CPU
         stored(["b1"], None, [500, 501, 502, 503])],                         # prompt B, block 1
        [Cleared()],                                                          # prefix cache reset
        [stored(["b1"], None, [500, 501, 502, 503])],                         # prompt B again
    ]
    for seq, events in enumerate(batches):
        payload = msgspec.msgpack.encode(Batch(ts=ts + seq, events=events, data_parallel_rank=0))
        yield b"kv@engine-1@meta-llama/Llama-3.1-8B-Instruct", seq.to_bytes(8, "big"), payload


def offload_stream(layout, as_bytes, unit):
    """vLLM's OffloadingConnector beside the GPU's events: its CPU tier's stores name block hashes only (token_ids
    empty, no parent, block_size = the offloaded block's size, or 0), as OffloadingConnectorScheduler.take_events
    builds them. With unit 8 (two GPU blocks of 4 per offloaded block) a CPU block's hash is its last GPU block's
    (vLLM's BlockHashListWithBlockSize); with bytes hashes the two digests concatenated, as releases before did."""
    Batch, Stored, Removed, Cleared = shapes(layout)
    full = layout in ("array-v0.23", "map-v0.26")
    names = ("a1", "a2", "a3", "a4")
    h = {n: block_hash(n, as_bytes) for n in names}

    def gpu_stored():
        kw = dict(block_hashes=[h[x] for x in names], parent_block_hash=None, token_ids=list(range(1, 17)),
                  block_size=4, lora_id=None, medium="GPU", lora_name=None)
        if full:
            kw.update(extra_keys=[None] * 4, group_idx=0, kv_cache_spec_kind="full_attention")
        return Stored(**kw)

    def cpu_stored(hashes):
        return Stored(block_hashes=hashes, parent_block_hash=None, token_ids=[], lora_id=None,
                      block_size=0 if unit == 0 else unit, medium="CPU", lora_name=None)

    def removed(hashes, medium):
        kw = dict(block_hashes=hashes, medium=medium)
        if full:
            kw["group_idx"] = 0
        return Removed(**kw)

    if unit == 0:
        cpu = [h["a1"], h["a2"], h["a3"]]
    elif as_bytes:
        cpu = [h["a1"] + h["a2"], h["a3"] + h["a4"]]
    else:
        cpu = [h["a2"], h["a4"]]
    ts = 1764028800.25
    batches = [
        [gpu_stored()],                                            # prompt A, 4 GPU blocks
        [cpu_stored(cpu)],                                         # offloaded to the CPU tier
        [removed([h[x] for x in names], "GPU")],                   # evicted from the GPU
        [removed(cpu[-1:], "CPU")],                                # the CPU tier drops its last block
    ]
    for seq, events in enumerate(batches):
        payload = msgspec.msgpack.encode(Batch(ts=ts + seq, events=events, data_parallel_rank=0))
        yield b"kv@engine-1@meta-llama/Llama-3.1-8B-Instruct", seq.to_bytes(8, "big"), payload


def tiers_stream(as_bytes):
    """vLLM 0.26+'s optional fields (map form): a GPU store echoing the request's session_id, a CPU tier, a local
    secondary tier (medium STORAGE, ownership "fs-tier", locality LOCAL) and a remote one (ownership "obj-tier",
    locality REMOTE) that the engine does not hold itself."""
    KVEventBatch, BlockStored, BlockRemoved, _ = shapes("map-v0.27")
    names = ("a1", "a2", "a3", "a4")
    h = {n: block_hash(n, as_bytes) for n in names}
    every = [h[x] for x in names]

    def by_hash(hashes, medium, **kw):
        return BlockStored(block_hashes=hashes, parent_block_hash=None, token_ids=[], block_size=0, lora_id=None,
                           medium=medium, lora_name=None, **kw)

    ts = 1764028800.25
    batches = [
        [BlockStored(block_hashes=every, parent_block_hash=None, token_ids=list(range(1, 17)), block_size=4,
                     lora_id=None, medium="GPU", lora_name=None, extra_keys=[None] * 4, group_idx=0,
                     kv_cache_spec_kind="full_attention", session_id="sess-1")],
        [by_hash(every[:2], "CPU")],
        [by_hash(every, "STORAGE", locality="LOCAL", ownership="fs-tier")],
        [by_hash(every, "STORAGE", locality="REMOTE", ownership="obj-tier")],
        [BlockRemoved(block_hashes=every, medium="GPU", group_idx=0)],
        [BlockRemoved(block_hashes=every[:1], medium="STORAGE", locality="REMOTE", ownership="obj-tier")],
        [BlockRemoved(block_hashes=every[3:], medium="STORAGE", locality="LOCAL", ownership="fs-tier")],
    ]
    for seq, events in enumerate(batches):
        payload = msgspec.msgpack.encode(KVEventBatch(ts=ts + seq, events=events, data_parallel_rank=0))
        yield b"kv@engine-1@meta-llama/Llama-3.1-8B-Instruct", seq.to_bytes(8, "big"), payload


def main(out):
    os.makedirs(out, exist_ok=True)
    for layout in ("array-v0.11", "array-v0.15", "array-v0.23", "map-v0.26"):
        for as_bytes in (False, True):
            name = layout + ("-bytes" if as_bytes else "") + ".frames"
            with open(os.path.join(out, name), "w") as f:
                f.write("# msgspec %s, %s; generated by kvtier-router/src/test/python/vllm_events.py\n"
                        % (msgspec.__version__, layout + (", bytes hashes" if as_bytes else ", int hashes")))
                for frames in stream(layout, as_bytes):
                    f.write(" ".join(x.hex() for x in frames) + "\n")
    for layout in ("array-v0.23", "map-v0.26"):
        for as_bytes in (False, True):
            for unit in (0, 8):
                name = "%s-offload%d%s.frames" % (layout, unit, "-bytes" if as_bytes else "")
                with open(os.path.join(out, name), "w") as f:
                    f.write("# msgspec %s, %s, OffloadingConnector CPU stores of block_size %d; generated by "
                            "kvtier-router/src/test/python/vllm_events.py\n"
                            % (msgspec.__version__, layout + (", bytes hashes" if as_bytes else ", int hashes"), unit))
                    for frames in offload_stream(layout, as_bytes, unit):
                        f.write(" ".join(x.hex() for x in frames) + "\n")
    for as_bytes in (False, True):
        name = "map-v0.27-tiers%s.frames" % ("-bytes" if as_bytes else "")
        with open(os.path.join(out, name), "w") as f:
            f.write("# msgspec %s, map form with locality, ownership and session_id, %s; generated by "
                    "kvtier-router/src/test/python/vllm_events.py\n"
                    % (msgspec.__version__, "bytes hashes" if as_bytes else "int hashes"))
            for frames in tiers_stream(as_bytes):
                f.write(" ".join(x.hex() for x in frames) + "\n")
    # The digests' expected 64-bit keys (last 8 bytes, as vLLM's int form and llm-d's normalisation agree).
    with open(os.path.join(out, "hashes.txt"), "w") as f:
        for n in ("a1", "a2", "a3", "l1", "c1", "c2", "b1"):
            f.write("%s %d\n" % (n, block_hash(n, False)))


if __name__ == "__main__":
    main(sys.argv[1])
