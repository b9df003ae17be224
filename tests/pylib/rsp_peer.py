"""The gdb end of a remote-protocol connection, for tests that speak raw
packets to `ptrev serve` (no gdb): write bytes, read packets and
notifications with a deadline."""
import os
import re
import select
import time


def frame(payload: bytes) -> bytes:
    return b'$' + payload + b'#%02x' % (sum(payload) & 0xff)


class Peer:
    """One end of a connection: write bytes, read packets with a deadline."""

    def __init__(self, wfile, rfd):
        self.wfile, self.rfd, self.buf = wfile, rfd, b''
        self.ack = True  # acknowledge each packet, as gdb does in ack mode
        self.notifications = []  # %...#xx seen while reading packets

    def send_raw(self, data: bytes):
        self.wfile(data)

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([self.rfd], [], [], left)
        if not r:
            return False
        chunk = os.read(self.rfd, 65536)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def read_byte(self, timeout=10):
        deadline = time.monotonic() + timeout
        while not self.buf:
            if not self._fill(deadline):
                return None
        b, self.buf = self.buf[:1], self.buf[1:]
        return b

    def _next_frame(self, timeout, want):
        """The next frame starting with want ('$' or '%'); a frame of the
        other kind met first is kept (notifications) or left in place."""
        deadline = time.monotonic() + timeout
        pattern = rb'([$%])([^#]*)#[0-9a-fA-F]{2}' if want == b'$' else rb'(%)([^#]*)#[0-9a-fA-F]{2}'
        while True:
            m = re.search(pattern, self.buf)
            if m and m.group(1) == b'%':
                self.buf = self.buf[:m.start()] + self.buf[m.end():]
                self.notifications.append(m.group(2))  # never acked
                if want == b'%':
                    return self.notifications.pop(0)
                continue
            if m and want == b'$':
                self.buf = self.buf[m.end():]
                if self.ack:
                    self.send_raw(b'+')
                return m.group(2)
            if not self._fill(deadline):
                return None

    def read_packet(self, timeout=10):
        """Next $...#xx packet (acks before it are skipped); None on timeout."""
        return self._next_frame(timeout, b'$')

    def read_notification(self, timeout=10):
        """Next %...#xx notification (one already seen first); None on
        timeout."""
        if self.notifications:
            return self.notifications.pop(0)
        return self._next_frame(timeout, b'%')

    def request(self, payload: bytes, timeout=10):
        self.send_raw(frame(payload))
        return self.read_packet(timeout)
