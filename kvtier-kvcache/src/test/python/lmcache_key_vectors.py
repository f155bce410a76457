#!/usr/bin/env python3
"""Writes src/test/resources/lmcache/chunk-keys.tsv, the oracle of LmcacheChunkKeysTest.

  PYTHONHASHSEED=0 python3 lmcache_key_vectors.py > ../resources/lmcache/chunk-keys.tsv

builtin: the chain is LMCache's own expression, hash((prefix, tuple(chunk), ())), run by this interpreter (CPython
>= 3.8: int and tuple hashes do not depend on the seed or the version), seeded with NONE_HASH = hash("0") as vLLM's
init_none_hash computes it under PYTHONHASHSEED=0 (CPython >= 3.11; -5282990986457227702 on <= 3.10).
sha256_cbor: sha256 of canonical CBOR of the same tuple, the first 8 bytes big-endian (LMCache after its PR #2999),
with lmcache_keys.py's CBOR subset (checked byte for byte against cbor2 where cbor2 is installed).
Columns: variant, none_hash, chunk_size, tokens name, chunk index, chain hash (decimal), key (model@1@0@hex@bfloat16).
"""
import os
import sys

import lmcache_keys as lk

if os.environ.get("PYTHONHASHSEED") != "0":
    sys.exit("run with PYTHONHASHSEED=0")
nh_builtin = hash("0")  # what vLLM's init_none_hash(hash) computes: hash(os.getenv("PYTHONHASHSEED"))
assert sys.version_info >= (3, 11) and nh_builtin == 5313149338359954478, nh_builtin
nh_cbor = lk.int8(lk.sha256_cbor("0"))
cases = [("range1000", list(range(1000)), [256, 16]), ("range256", list(range(256)), [256]),
         ("range255", list(range(255)), [256]), ("lcg600", lk.lcg_tokens(600), [256, 64])]
print("#variant\tnone_hash\tchunk_size\ttokens\tindex\thash\tkey")
for name, toks, sizes in cases:
    for size in sizes:
        full = len(toks) - len(toks) % size
        prefix = nh_builtin
        for i in range(0, full, size):
            prefix = hash((prefix, tuple(toks[i:i + size]), ()))  # LMCache's expression, by the interpreter itself
            print(f"builtin\t{nh_builtin}\t{size}\t{name}\t{i // size}\t{prefix}\t{lk.key(prefix)}")
        for i, h in enumerate(lk.chunk_hashes(toks, size, "sha256_cbor/int8", nh_cbor, save_unfull_chunk=False)):
            print(f"sha256_cbor\t{nh_cbor}\t{size}\t{name}\t{i}\t{h}\t{lk.key(h)}")
