#!/usr/bin/env python3
"""Reimplementation (stdlib only) of the keys LMCache writes to a redis:// remote.

Written from a reading of LMCache's lmcache/v1/token_database.py, lmcache/utils.py
(CacheEngineKey) and vLLM's init_none_hash / hashing helpers; see lmcache-keys.md.
Everything that a Java router must redo is done here *by hand* (Python's int, tuple,
str hashes; canonical CBOR; the chain; the key string) and checked against the
running interpreter's hash() / pickle, so the printed vectors are a Java test oracle.

  python3 lmcache_keys.py                 # test vectors (stdout)
  python3 lmcache_keys.py --crosscheck    # also compare with other pythons found

Variants (the name is printed with each vector):
  builtin/canon   hash((prefix, tuple(chunk), ()))   LMCache after PR #1897 (default
                  algorithm 'builtin'); deterministic on every CPython >= 3.8
  builtin/None    hash((prefix, tuple(chunk), None)) LMCache PR #1380 .. v0.3.12;
                  only deterministic on CPython >= 3.12 (constant hash(None))
  builtin/2tuple  hash((prefix, tuple(chunk)))       LMCache-Ascend patch / forks
  sha256_cbor/int8  first 8 bytes (big endian) of sha256(cbor((prefix,tuple,()))),
                  NONE_HASH folded the same way (LMCache after PR #2999)
  sha256_cbor/bytes full 32-byte digests chained (between PR #1897 and PR #2999)
  sha256/int8     like sha256_cbor/int8 but pickle protocol 5 instead of CBOR
"""
import hashlib
import os
import pickle
import struct
import subprocess
import sys

M64 = (1 << 64) - 1
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
WORLD_SIZE, WORKER_ID, FMT, DTYPE = 1, 0, "vllm", "bfloat16"


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


# ---- CPython hash() reimplementation (64-bit builds) ----------------------
P61 = (1 << 61) - 1  # _PyHASH_MODULUS


def py_int_hash(n):
    """Objects/longobject.c long_hash: sign * (|n| mod 2**61-1); -1 becomes -2."""
    h = abs(n) % P61
    if n < 0:
        h = -h
    return -2 if h == -1 else h


XXP1, XXP2, XXP5 = 11400714785074694791, 14029467366897019727, 2870177450012600261


def py_tuple_hash(lanes):
    """Objects/tupleobject.c tuplehash (CPython >= 3.8), lanes = item hashes."""
    acc = XXP5
    for lane in lanes:
        acc = (acc + (lane & M64) * XXP2) & M64
        acc = ((acc << 31) | (acc >> 33)) & M64  # rotate left 31
        acc = (acc * XXP1) & M64
    acc = (acc + (len(lanes) ^ (XXP5 ^ 3527539))) & M64
    return 1546275796 if acc == M64 else s64(acc)


NONE_HASH_312 = 0xFCA86420  # hash(None) is this constant from CPython 3.12 on


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M64


def siphash(k0, k1, data, c_rounds, d_rounds):
    """SipHash-c-d as in Python/pyhash.c (13 for 3.11+, 24 for <= 3.10)."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rnd(v0, v1, v2, v3):
        v0 = (v0 + v1) & M64; v1 = _rotl(v1, 13) ^ v0; v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & M64; v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & M64; v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & M64; v1 = _rotl(v1, 17) ^ v2; v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = len(data)
    full = n - n % 8
    for i in range(0, full, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        for _ in range(c_rounds):
            v0, v1, v2, v3 = rnd(v0, v1, v2, v3)
        v0 ^= m
    b = ((n & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= b
    for _ in range(c_rounds):
        v0, v1, v2, v3 = rnd(v0, v1, v2, v3)
    v0 ^= b
    v2 ^= 0xFF
    for _ in range(d_rounds):
        v0, v1, v2, v3 = rnd(v0, v1, v2, v3)
    return (v0 ^ v1) ^ (v2 ^ v3)


def hash_secret(seed):
    """Python/bootstrap_hash.c: PYTHONHASHSEED=0 -> zero key, else an LCG stream."""
    buf = bytearray(24)
    if seed:
        x = seed
        for i in range(24):
            x = (x * 214013 + 2531011) & 0xFFFFFFFF
            buf[i] = (x >> 16) & 0xFF
    return int.from_bytes(buf[0:8], "little"), int.from_bytes(buf[8:16], "little")


def py_str_hash(s, seed, py_minor):
    """hash(str) under PYTHONHASHSEED=seed; 1-byte-per-char (latin-1) strings only."""
    data = s.encode("latin-1")
    if not data:
        return 0
    k0, k1 = hash_secret(seed)
    h = s64(siphash(k0, k1, data, 1, 3) if py_minor >= 11 else siphash(k0, k1, data, 2, 4))
    return -2 if h == -1 else h


def py_hash(obj, none_hash=NONE_HASH_312):
    if obj is None:
        return none_hash
    if isinstance(obj, int):
        return py_int_hash(obj)
    if isinstance(obj, tuple):
        return py_tuple_hash([py_hash(o, none_hash) for o in obj])
    raise TypeError(type(obj))


# ---- canonical CBOR (the subset cbor2.dumps(..., canonical=True) emits here) ----
def _head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for add, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | add]) + struct.pack(fmt, n)
    raise ValueError("bignum not needed here")


def cbor(obj):
    if obj is None:
        return b"\xf6"
    if isinstance(obj, int):
        return _head(0, obj) if obj >= 0 else _head(1, -1 - obj)
    if isinstance(obj, bytes):
        return _head(2, len(obj)) + obj
    if isinstance(obj, str):
        b = obj.encode("utf-8")
        return _head(3, len(b)) + b
    if isinstance(obj, (tuple, list)):
        return _head(4, len(obj)) + b"".join(cbor(o) for o in obj)
    raise TypeError(type(obj))


def sha256_cbor(obj):
    return hashlib.sha256(cbor(obj)).digest()


def sha256_pickle(obj):  # vLLM's "sha256": pickle protocol 5 (HIGHEST_PROTOCOL on 3.8+)
    return hashlib.sha256(pickle.dumps(obj, protocol=5)).digest()


def int8(digest):  # LMCache _normalize_hash_to_int: first 8 bytes, big endian
    return int.from_bytes(digest[:8], "big")


# ---- LMCache chunking + chain ----------------------------------------------
def chunks(tokens, chunk_size, save_unfull_chunk=True):
    end = len(tokens) if save_unfull_chunk else len(tokens) - len(tokens) % chunk_size
    return [tokens[i:i + chunk_size] for i in range(0, end, chunk_size)]


def none_hash(variant, seed, py_minor=12):
    """NONE_HASH as LMCache gets it from vLLM's init_none_hash (PYTHONHASHSEED set)."""
    s = str(seed)
    if variant.startswith("builtin"):
        return py_str_hash(s, seed, py_minor)  # hash(os.getenv("PYTHONHASHSEED"))
    if variant == "sha256_cbor/bytes":
        return sha256_cbor(s)
    if variant == "sha256_cbor/int8":
        return int8(sha256_cbor(s))
    if variant == "sha256/int8":
        return int8(sha256_pickle(s))
    raise ValueError(variant)


def chunk_hashes(tokens, chunk_size, variant, init, save_unfull_chunk=True):
    out, prefix = [], init
    for c in chunks(tokens, chunk_size, save_unfull_chunk):
        t = tuple(c)
        if variant == "builtin/canon":
            prefix = py_hash((prefix, t, ()))
        elif variant == "builtin/None":
            prefix = py_hash((prefix, t, None))
        elif variant == "builtin/2tuple":
            prefix = py_hash((prefix, t))
        elif variant == "sha256_cbor/int8":
            prefix = int8(sha256_cbor((prefix, t, ())))
        elif variant == "sha256_cbor/bytes":
            prefix = sha256_cbor((prefix, t, ()))
        elif variant == "sha256/int8":
            prefix = int8(sha256_pickle((prefix, t, ())))
        else:
            raise ValueError(variant)
        out.append(prefix)
    return out


def hash_hex(h):
    """CacheEngineKey.chunk_hash_hex: bytes -> .hex(); int -> f'{h:x}' (sign + magnitude)."""
    return h.hex() if isinstance(h, bytes) else format(h, "x")


def key(h, fmt_era=False, dtype=DTYPE, model=MODEL, ws=WORLD_SIZE, worker=WORKER_ID):
    body = f"{model}@{ws}@{worker}@{hash_hex(h)}"
    if dtype:
        body += "@" + dtype
    return f"{FMT}@{body}" if fmt_era else body


# ---- self checks against this interpreter ----------------------------------
def self_check():
    import random
    rng = random.Random(7)
    minor = sys.version_info[1]
    seed_env = os.environ.get("PYTHONHASHSEED")
    n = 0
    for _ in range(2000):
        vals = [rng.choice([0, 1, -1, -2, 2**61 - 1, 2**61, -(2**63), 2**63 - 1,
                            rng.getrandbits(64) - 2**63, rng.randrange(200000)])
                for _ in range(rng.randrange(0, 20))]
        for obj in (tuple(vals), (vals[0] if vals else 5, tuple(vals), ())):
            assert py_hash(obj) == hash(obj), obj
            n += 1
    if minor >= 12:
        assert hash(None) == NONE_HASH_312
        assert py_hash((3, (1, 2), None)) == hash((3, (1, 2), None))
    if seed_env is not None and seed_env.isdigit():
        for s in ("0", "42", "abc", "", "12345678", "a" * 40):
            assert py_str_hash(s, int(seed_env), minor) == hash(s), s
    for obj in ((5, (1, 2, 3), ()), (-7, tuple(range(300)), ()), (b"\x01" * 32, (1,), ())):
        assert pickle.dumps(obj, protocol=5) == pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL) or minor < 8
    try:  # optional: compare the CBOR subset with cbor2 when it is importable
        import cbor2
        for obj in ((5, (1, 2, 3), ()), (-(2**63), tuple(range(70000, 70300)), ()),
                    (sha256_cbor("0"), (0, 23, 24, 255, 256, 65535, 65536, 2**32), ()), "0",
                    (18446744073709551615, (), None)):
            assert cbor2.dumps(obj, canonical=True) == cbor(obj), obj
        cb = "CBOR subset byte-identical to the installed cbor2 (canonical=True)"
    except ImportError:
        cb = "cbor2 not importable, CBOR encoder unchecked here"
    return f"self-check OK on CPython {sys.version.split()[0]}: {n} int/tuple hashes" + (
        f", str hashes under PYTHONHASHSEED={seed_env}" if seed_env and seed_env.isdigit() else "") + f"; {cb}"


# ---- vectors -----------------------------------------------------------------
def lcg_tokens(n, seed=1):
    x, out = seed, [128000]
    while len(out) < n:
        x = (x * 6364136223846793005 + 1442695040888963407) & M64
        out.append((x >> 33) % 128256)
    return out


def print_vectors():
    print(f"# model={MODEL} world_size={WORLD_SIZE} worker_id={WORKER_ID} dtype={DTYPE}")
    nh = {
        "seed0_py311+": py_str_hash("0", 0, 12),
        "seed0_py<=310": py_str_hash("0", 0, 10),
        "seed42_py311+": py_str_hash("42", 42, 12),
    }
    print("# NONE_HASH for builtin (hash(str(PYTHONHASHSEED))):", nh)
    print("# NONE_HASH sha256_cbor/bytes seed0:", sha256_cbor("0").hex())
    print("# NONE_HASH sha256_cbor/int8  seed0:", int8(sha256_cbor("0")), hex(int8(sha256_cbor("0"))))
    print("# NONE_HASH sha256/int8 (pickle) seed0:", int8(sha256_pickle("0")))
    print("# hash(()) =", py_tuple_hash([]), " hash(None) on 3.12+ =", NONE_HASH_312)
    cases = [
        ("range(1000)", list(range(1000)), [256, 16]),
        ("range(256)", list(range(256)), [256]),
        ("range(255)", list(range(255)), [256]),
        ("empty", [], [256]),
        ("lcg600", lcg_tokens(600), [256]),
    ]
    plans = [
        ("builtin/canon", nh["seed0_py311+"], "PYTHONHASHSEED=0, CPython>=3.11"),
        ("builtin/canon", nh["seed0_py<=310"], "PYTHONHASHSEED=0, CPython<=3.10"),
        ("builtin/canon", 0, "NONE_HASH=0 (vLLM without init_none_hash)"),
        ("builtin/None", nh["seed0_py311+"], "PYTHONHASHSEED=0, CPython>=3.12 only"),
        ("builtin/2tuple", nh["seed0_py311+"], "PYTHONHASHSEED=0, CPython>=3.11"),
        ("sha256_cbor/int8", none_hash("sha256_cbor/int8", 0), "PYTHONHASHSEED=0"),
        ("sha256_cbor/bytes", none_hash("sha256_cbor/bytes", 0), "PYTHONHASHSEED=0"),
        ("sha256/int8", none_hash("sha256/int8", 0), "PYTHONHASHSEED=0"),
    ]
    for name, toks, sizes in cases:
        for cs in sizes:
            for pi, (variant, init, note) in enumerate(plans):
                everything = name == "range(1000)" and cs == 256
                if not everything and pi not in (0, 5):  # default builtin + sha256_cbor only
                    continue
                hs = chunk_hashes(toks, cs, variant, init)
                full = len(chunks(toks, cs, False))
                print(f"\n== tokens={name} len={len(toks)} chunk_size={cs} variant={variant} "
                      f"[{note}] chunks={len(hs)} (full={full}; save_unfull_chunk=False drops the rest)")
                show = list(enumerate(hs))
                if len(show) > 6:
                    show = show[:3] + show[-3:]
                for i, h in show:
                    end = min((i + 1) * cs, len(toks))
                    dec = h.hex() if isinstance(h, bytes) else str(h)
                    print(f"  chunk {i:3d} tokens[{i * cs}:{end}] hash={dec}")
                    print(f"    key     {key(h)}")
                    if i == 0 and variant == "builtin/canon" and cs == 256 and name == "range(1000)":
                        print(f"    redis   {key(h)}kv_bytes  /  {key(h)}metadata  (EXISTS ...metadata)")
                        print(f"    fmt-era {key(h, fmt_era=True)}   (<= ~v0.3.12, dtype since PR #1859)")
                        print(f"    no-dtype fmt-era {key(h, fmt_era=True, dtype='')}")


def crosscheck():
    """Compare builtin/canon and builtin/None against real interpreters (PYTHONHASHSEED=0)."""
    import glob
    pys = sorted(set(glob.glob("/root/.pyenv/versions/3.*/bin/python3") + ["/usr/bin/python3"]))
    prog = ("import sys,os;t=list(range(1000));n=hash(os.environ['PYTHONHASHSEED']);"
            "v=sys.argv[1];p=n;o=[]\n"
            "for i in range(0,len(t),256):\n"
            " c=tuple(t[i:i+256]);p=hash((p,c,())) if v=='canon' else hash((p,c,None));o.append(p)\n"
            "print(sys.version.split()[0],n,o)")
    for variant in ("canon", "None"):
        for py in pys:
            runs = set()
            for _ in range(2):
                r = subprocess.run([py, "-c", prog, variant], capture_output=True, text=True,
                                   env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"})
                if r.returncode == 0:
                    runs.add(r.stdout.strip())
            for line in sorted(runs):
                ver, rest = line.split(" ", 1)
                minor = int(ver.split(".")[1])
                if minor < 8:
                    continue
                mine_n = py_str_hash("0", 0, minor)
                mine = chunk_hashes(list(range(1000)), 256, "builtin/" + variant, mine_n)
                ok = rest == f"{mine_n} {mine}"
                stable = "stable" if len(runs) == 1 else "DIFFERS BETWEEN RUNS"
                print(f"{variant:5s} {ver:8s} {stable:22s} matches-reimpl={ok}")


if __name__ == "__main__":
    print("#", self_check())
    print_vectors()
    if "--crosscheck" in sys.argv:
        print("\n# crosscheck against real interpreters, PYTHONHASHSEED=0, range(1000)/256")
        crosscheck()
