"""TensorPool: save, load, free and locate KV-cache tensors in a kvtier node, through shared memory when the node
runs on this host (kvtier server --shm yes) and this process may map its memory, over RESP (TCP) otherwise.

Standard library only; numpy arrays and torch tensors (CPU, or CUDA through a pinned host buffer) are taken and
filled without extra copies when those packages are installed. The shared-memory protocol (KVC.SHM) and its safety
rules: docs/shared-memory.md.
"""
import mmap
import os

from .resp import Connection, RespError


def _torch(obj):
    """torch, if obj is one of its tensors (imported only then: importing torch takes seconds)."""
    if obj is None or not type(obj).__module__.startswith('torch'):
        return None
    import torch
    return torch


def _bytes_view(obj):
    """A flat unsigned-byte memoryview of obj's bytes (bytes-like, numpy array, CPU torch tensor)."""
    torch = _torch(obj)
    if torch is not None and isinstance(obj, torch.Tensor):
        t = obj.detach()
        if t.device.type != 'cpu':
            t = t.to('cpu')
        t = t.contiguous()
        return memoryview(t.view(-1).view(torch.uint8).numpy()).cast('B')
    view = memoryview(obj)
    if not view.c_contiguous:
        raise ValueError('save needs a contiguous buffer')
    return view.cast('B')


class TensorPool:
    """A kvtier node's values as tensors. Not thread-safe: one per thread (each holds one connection)."""

    def __init__(self, host='127.0.0.1', port=6379, password=None, shm=True, timeout=30.0):
        self.conn = Connection(host, port, password, timeout)
        self._maps = {}   # slab -> mmap
        self._slabs = {}  # slab -> memoryview of it (slices copy nothing)
        self.local = bool(shm) and self._hello()

    # ---- setup -------------------------------------------------------------------------------------------------

    def _hello(self):
        try:
            reply = self.conn.call('KVC.SHM.HELLO')
        except RespError:
            return False  # shared memory off, an older node, or a cluster: RESP it is
        fields = dict(zip(reply[0::2], reply[1::2]))
        check, token = fields.get(b'check'), fields.get(b'token')
        if check is None or token is None:
            return False
        try:
            with open(check, 'rb') as f:
                return f.read(len(token)) == token
        except OSError:
            return False  # another host, another user, or a /proc that does not show the node

    def _slab(self, n):
        m = self._slabs.get(n)
        if m is None:
            path, size = self.conn.call('KVC.SHM.SLAB', n)
            fd = os.open(path, os.O_RDWR)
            try:
                mapped = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            finally:
                os.close(fd)
            self._maps[n] = mapped
            m = self._slabs[n] = memoryview(mapped)
        return m

    # ---- the pool ----------------------------------------------------------------------------------------------

    def save(self, key, obj):
        """Stores obj's bytes (bytes-like, numpy array, torch tensor) under key, as SET does."""
        src = _bytes_view(obj)
        if self.local:
            try:
                lease = self.conn.call('KVC.SHM.RESERVE', key, src.nbytes)
            except RespError:
                lease = None  # too large for memory, or leases full: SET says what it can do
            if lease is not None:
                self._copy_in(lease, src)
                self.conn.call('KVC.SHM.COMMIT', lease[0])
                return
        self.conn.call('SET', key, src)

    def load(self, key, out=None):
        """The value of key: into out (a writable buffer, numpy array or torch tensor, CPU or CUDA; returned) or as
        bytes; None when there is no such key. Raises ValueError if out has no room for it."""
        torch = _torch(out)
        if torch is not None and isinstance(out, torch.Tensor):
            if out.device.type != 'cpu':
                staging = torch.empty(out.numel() * out.element_size(), dtype=torch.uint8, pin_memory=True)
                if self._load_into(key, memoryview(staging.numpy())) is None:
                    return None
                out.view(-1).view(torch.uint8).copy_(staging, non_blocking=False)
                return out
            if not out.is_contiguous():
                raise ValueError('load needs a contiguous tensor')
            n = self._load_into(key, memoryview(out.view(-1).view(torch.uint8).numpy()))
            return None if n is None else out
        if out is not None:
            n = self._load_into(key, memoryview(out).cast('B'))
            return None if n is None else out
        if self.local:
            reply = self._lease(key)
            if reply is None:
                return None
            if isinstance(reply, list):
                buf = bytearray(reply[1])
                self._copy_out(reply, memoryview(buf))
                if self.conn.call('KVC.SHM.RELEASE', reply[0]) == 1:
                    return bytes(buf)
        return self.conn.call('GET', key)

    def _lease(self, key):
        try:
            return self.conn.call('KVC.SHM.GET', key)
        except RespError as e:
            if str(e).startswith('LEASEFULL'):
                return b'leasefull'  # too many leases held: read it over RESP
            raise

    def _load_into(self, key, dst):
        if self.local:
            reply = self._lease(key)
            if reply is None:
                return None
            if isinstance(reply, list):
                if reply[1] > dst.nbytes:
                    self.conn.call('KVC.SHM.RELEASE', reply[0])
                    raise ValueError('value of %d bytes, room for %d' % (reply[1], dst.nbytes))
                self._copy_out(reply, dst)
                if self.conn.call('KVC.SHM.RELEASE', reply[0]) == 1:
                    return reply[1]
                # the lease expired while we copied: the bytes may be another value's; read it over RESP
        self.conn.send('GET', key)
        return self.conn.read(into=dst)

    def _copy_out(self, lease, dst):
        at = 0
        for i in range(2, len(lease), 3):
            slab, offset, n = lease[i], lease[i + 1], lease[i + 2]
            dst[at:at + n] = self._slab(slab)[offset:offset + n]
            at += n

    def _copy_in(self, lease, src):
        at = 0
        for i in range(2, len(lease), 3):
            slab, offset, n = lease[i], lease[i + 1], lease[i + 2]
            self._slab(slab)[offset:offset + n] = src[at:at + n]
            at += n

    def free(self, key):
        """Deletes key; True if it existed."""
        return self.conn.call('DEL', key) == 1

    def location(self, key):
        """'memory' or 'disk' where this node holds key, None if nowhere; in a cluster, for a key another node
        owns, that node's 'host:port'."""
        try:
            where = self.conn.call('KVC.LOOKUP', key)[0]
        except RespError as e:
            parts = str(e).split()
            if parts and parts[0] in ('MOVED', 'ASK') and len(parts) >= 3:
                return parts[2]
            raise
        return None if where is None else where.decode()

    def close(self):
        for view in self._slabs.values():
            view.release()
        for m in self._maps.values():
            m.close()
        self._slabs.clear()
        self._maps.clear()
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def lmcache_key(model, chunk_hash, world_size=1, worker_id=0, dtype='bfloat16'):
    """LMCache's CacheEngineKey string for a chunk (model@world_size@worker_id@hash hex@dtype), as its Redis
    connector stores it: chunk_hash an int (hex without padding) or a hex string."""
    h = format(chunk_hash, 'x') if isinstance(chunk_hash, int) else chunk_hash
    return '%s@%d@%d@%s@%s' % (model, world_size, worker_id, h, dtype)
