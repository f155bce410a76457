"""A small blocking RESP2 client over TCP, standard library only: what TensorPool needs of a kvtier (or Redis) node."""
import socket


class RespError(Exception):
    """An error reply (-ERR ..., -LEASEFULL ..., -MOVED ...)."""


class Connection:
    """One TCP connection; not thread-safe. Every call has the connection's timeout (seconds)."""

    def __init__(self, host='127.0.0.1', port=6379, password=None, timeout=30.0):
        self.host, self.port = host, port
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        if password is not None:
            self.call('AUTH', password)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, *args):
        """Sends one command; arguments are str, int, bytes or any object with the buffer protocol."""
        parts = [b'*%d\r\n' % len(args)]
        big = []
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            elif isinstance(a, int):
                a = str(a).encode()
            view = memoryview(a).cast('B')
            parts.append(b'$%d\r\n' % view.nbytes)
            if view.nbytes > 65536:
                big.append((len(parts), view))
                parts.append(b'')
            else:
                parts.append(bytes(view))
            parts.append(b'\r\n')
        if not big:
            self.sock.sendall(b''.join(parts))
            return
        start = 0
        for index, view in big:
            self.sock.sendall(b''.join(parts[start:index]))
            self.sock.sendall(view)
            start = index + 1
        self.sock.sendall(b''.join(parts[start:]))

    def call(self, *args):
        self.send(*args)
        return self.read()

    def _line(self):
        while True:
            i = self.buf.find(b'\r\n')
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill()

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError('kvtier closed the connection')
        self.buf += chunk

    def read_bulk_into(self, n, out):
        """Reads n payload bytes (and CRLF) straight into the writable buffer out."""
        view = memoryview(out).cast('B')
        have = min(n, len(self.buf))
        view[:have] = self.buf[:have]
        del self.buf[:have]
        while have < n:
            got = self.sock.recv_into(view[have:n], n - have)
            if got == 0:
                raise ConnectionError('kvtier closed the connection')
            have += got
        while len(self.buf) < 2:
            self._fill()
        del self.buf[:2]

    def read(self, into=None):
        """One reply: str, int, bytes, None, list; raises RespError for an error reply. A bulk reply goes into
        `into` (a writable buffer) when given, and the reply is then its length."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b'+':
            return rest.decode()
        if kind == b'-':
            raise RespError(rest.decode())
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            if n < 0:
                return None
            if into is not None:
                if n > memoryview(into).nbytes:
                    self._discard(n + 2)
                    raise ValueError('value of %d bytes, room for %d' % (n, memoryview(into).nbytes))
                self.read_bulk_into(n, into)
                return n
            while len(self.buf) < n + 2:
                self._fill()
            data = bytes(self.buf[:n])
            del self.buf[:n + 2]
            return data
        if kind == b'*':
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ConnectionError('unexpected reply %r' % line[:40])

    def _discard(self, n):
        while len(self.buf) < n:
            self._fill()
        del self.buf[:n]
