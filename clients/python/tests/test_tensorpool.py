"""TensorPool against a real kvtier node (KVTIER_PORT; started by kvtier-it's PythonTensorPoolIT with --shm yes):
numpy arrays, CPU torch tensors and bytes saved and loaded exactly, over shared memory and over RESP, location()
telling memory from disk, a killed client's leases, and (KVTIER_EXPECT_LOCAL=0) a client that may not map the
node's memory falling back to RESP.

    KVTIER_PORT=6379 python3 -m unittest discover -s clients/python/tests
"""
import os
import random
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from kvtier import Connection, RespError, TensorPool, lmcache_key  # noqa: E402

PORT = int(os.environ.get('KVTIER_PORT', '6379'))
EXPECT_LOCAL = os.environ.get('KVTIER_EXPECT_LOCAL', '1') == '1'

try:
    import numpy
except ImportError:
    numpy = None
try:
    import torch
except ImportError:
    torch = None


def info(field):
    c = Connection('127.0.0.1', PORT)
    try:
        text = c.call('INFO', 'everything').decode()
    finally:
        c.close()
    for line in text.splitlines():
        if line.startswith(field + ':'):
            return line.split(':', 1)[1]
    return None


class TensorPoolTest(unittest.TestCase):
    def setUp(self):
        self.pool = TensorPool('127.0.0.1', PORT)
        self.tcp = TensorPool('127.0.0.1', PORT, shm=False)

    def tearDown(self):
        self.pool.close()
        self.tcp.close()

    def test_uses_shared_memory_when_it_may(self):
        self.assertEqual(self.pool.local, EXPECT_LOCAL)
        self.assertFalse(self.tcp.local)

    def test_bytes_round_trip_both_ways(self):
        rng = random.Random(1)
        for size in (0, 1, 1000, 32768, 32769, 65536, 300000, 1 << 20):
            data = bytes(rng.getrandbits(8) for _ in range(min(size, 4096))) * (size // 4096 + 1)
            data = data[:size]
            for writer, reader in ((self.pool, self.tcp), (self.tcp, self.pool), (self.pool, self.pool)):
                key = 'b%d-%s%s' % (size, writer.local, reader.local)
                writer.save(key, data)
                self.assertEqual(reader.load(key), data, key)
                out = bytearray(size)
                self.assertIs(reader.load(key, out=out), out)
                self.assertEqual(bytes(out), data)
        self.assertIsNone(self.pool.load('no-such-key'))
        with self.assertRaises(ValueError):
            self.pool.load('b1000-TrueTrue' if EXPECT_LOCAL else 'b1000-FalseFalse', out=bytearray(10))

    @unittest.skipIf(numpy is None, 'numpy is not installed')
    def test_numpy_arrays_exactly(self):
        rng = numpy.random.default_rng(7)
        for dtype in (numpy.float16, numpy.float32, numpy.int8, numpy.uint64):
            a = (rng.standard_normal((16, 8, 128)) * 100).astype(dtype)
            key = lmcache_key('meta-llama/Llama-3.1-8B-Instruct', 0xb3964e7bb1cc2746 + a.itemsize)
            self.pool.save(key, a)
            out = numpy.empty_like(a)
            self.assertIs(self.pool.load(key, out=out), out)
            self.assertTrue(numpy.array_equal(out, a), dtype)
            self.assertEqual(self.tcp.load(key), a.tobytes())

    @unittest.skipIf(torch is None, 'torch is not installed')
    def test_cpu_torch_tensors_exactly(self):
        g = torch.Generator().manual_seed(3)
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            t = torch.randn((2, 16, 8, 128), generator=g).to(dtype)  # a vLLM block's K and V for one layer
            key = 'torch-%s' % dtype
            self.pool.save(key, t)
            out = torch.empty_like(t)
            self.assertIs(self.pool.load(key, out=out), out)
            self.assertTrue(torch.equal(out, t), dtype)
            back = torch.empty_like(t)
            self.tcp.load(key, out=back)
            self.assertTrue(torch.equal(back, t))

    def test_location_tells_memory_from_disk_and_free_deletes(self):
        self.pool.save('where', b'x' * 100000)
        self.assertEqual(self.pool.location('where'), 'memory')
        self.assertIsNone(self.pool.location('nowhere'))
        chunk = bytes(1 << 20)
        for i in range(80):  # 80 MiB through the node's 32 MiB of memory: 'where' goes to disk
            self.pool.save('fill%d' % i, chunk)
        deadline = time.time() + 10
        while self.pool.location('where') != 'disk' and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.pool.location('where'), 'disk')
        self.assertEqual(self.pool.load('where'), b'x' * 100000)  # from disk, over RESP
        self.assertTrue(self.pool.free('where'))
        self.assertFalse(self.pool.free('where'))
        self.assertIsNone(self.pool.location('where'))

    @unittest.skipUnless(EXPECT_LOCAL, 'needs shared memory')
    def test_a_killed_client_leaks_no_leases(self):
        self.pool.save('held', b'y' * 200000)
        script = ('import sys, os, time; sys.path.insert(0, %r); from kvtier import TensorPool; '
                  'p = TensorPool("127.0.0.1", %d); '
                  '[p.conn.call("KVC.SHM.GET", "held") for _ in range(30)]; '
                  'p.conn.call("KVC.SHM.RESERVE", "never", 1 << 20); print("holding", flush=True); time.sleep(60)'
                  % (os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'), PORT))
        child = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(child.stdout.readline().strip(), 'holding')
            self.assertGreaterEqual(int(info('shm_leases_held')), 31)  # 6 MB + 1 MiB: under a quarter of 32 MiB
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        deadline = time.time() + 10
        while int(info('shm_leases_held')) != 0 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(int(info('shm_leases_held')), 0)
        self.assertEqual(int(info('shm_leased_bytes')), 0)
        self.assertIsNone(self.pool.load('never'))
        self.assertEqual(self.pool.load('held'), b'y' * 200000)

    def test_errors_are_clear(self):
        with self.assertRaises(RespError) as e:
            self.pool.conn.call('KVC.SHM.COMMIT', 42)
        self.assertIn('no write lease 42', str(e.exception))


if __name__ == '__main__':
    unittest.main()
