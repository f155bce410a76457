"""What the bench scripts share (standard library only): a minimal RESP client (commands encoded as arrays of bulk
strings, replies read whole; error replies come back as RuntimeError values, not raised, so a caller can count them),
and dropping the page cache."""
import socket
import subprocess


def encode(*args):
    out = [b'*%d\r\n' % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b'$%d\r\n%s\r\n' % (len(a), a))
    return b''.join(out)


class Conn:
    """One RESP connection to 127.0.0.1:port."""

    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def _fill(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 22)
            if not d:
                raise ConnectionError('closed')
            self.buf += d

    def _line(self):
        while True:
            i = self.buf.find(b'\r\n')
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill(len(self.buf) + 1)

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b'+', b':'):
            return rest.decode()
        if t == b'-':
            return RuntimeError(rest.decode(errors='replace'))
        if t == b'$':
            n = int(rest)
            if n < 0:
                return None
            self._fill(n + 2)
            v = bytes(self.buf[:n])
            del self.buf[:n + 2]
            return v
        if t == b'*':
            return [self.reply() for _ in range(max(int(rest), 0))]
        raise ValueError('bad reply %r' % line[:50])

    def call(self, *args):
        self.s.sendall(encode(*args))
        return self.reply()

    def set_large(self, key, value):
        """SET of a large value without copying it into the request: the header and the value go as two sends."""
        key = key if isinstance(key, bytes) else str(key).encode()
        self.s.sendall(b'*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n' % (len(key), key, len(value)))
        self.s.sendall(value)
        self.s.sendall(b'\r\n')
        return self.reply()

    def get_into(self, key, out):
        """GET whose bulk reply is received straight into the bytearray ``out`` (as large as any value asked for);
        returns the value's length, or -1 for nil. Error replies come back as RuntimeError values."""
        self.s.sendall(encode('GET', key))
        line = self._line()
        if line[:1] == b'-':
            return RuntimeError(line[1:].decode(errors='replace'))
        if line[:1] != b'$':
            raise ValueError('bad reply %r' % line[:50])
        n = int(line[1:])
        if n < 0:
            return -1
        view = memoryview(out)
        have = min(len(self.buf), n + 2)
        view[:have] = self.buf[:have]
        del self.buf[:have]
        while have < n + 2:
            got = self.s.recv_into(view[have:n + 2])
            if not got:
                raise ConnectionError('closed')
            have += got
        return n

    def close(self):
        self.s.close()


def drop_page_cache():
    """Writes dirty pages out and drops the page cache; False where that is not allowed (not root)."""
    try:
        subprocess.run(['sync'], check=True)
        with open('/proc/sys/vm/drop_caches', 'w') as f:
            f.write('3\n')
        return True
    except OSError:
        return False
