"""kvtier's Python client: TensorPool (save, load, free, location) over shared memory or RESP."""
from .resp import Connection, RespError
from .tensorpool import TensorPool, lmcache_key

__all__ = ['Connection', 'RespError', 'TensorPool', 'lmcache_key']
