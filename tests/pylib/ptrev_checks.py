"""What the end-to-end Python tests share: a line per check (ok/FAIL and
what was checked), the number of failures as the exit status, and a free
loopback port for a server to listen on."""
import socket

FAILURES = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        FAILURES.append(what)


def finish():
    """The summary line and the test's exit status."""
    print('%d failure(s)' % len(FAILURES))
    return 1 if FAILURES else 0


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]
