#!/usr/bin/env python3
"""Bad input at the protocol level, against the real `ptrev serve`.

Speaks raw remote protocol (no gdb) so it can send what gdb never would:
malformed, oversized, badly checksummed and out-of-sequence packets. Each must
get an error (or empty) reply and the session must go on. Then it drops the
connection, over stdio and over TCP, and checks that ptrev exits and the
program is killed. Also what gdbserver users count on at this level: the
program found in PATH, gdbserver's monitor commands (debug logs, exit),
and the terminal given to the program.

usage: rsp_robustness.py PTREV PROGRAM_DIR
"""
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402
from rsp_peer import Peer, frame  # noqa: E402


def pid_alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
        return state != 'Z'
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_dead(pid, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def program_pid(stderr_text):
    m = re.search(r'pid = (\d+)', stderr_text)
    return int(m.group(1)) if m else None


def read_stderr_until(proc, pattern, timeout=10):
    """Read the server's stderr until pattern appears; returns the text."""
    text = ''
    deadline = time.monotonic() + timeout
    fd = proc.stderr.fileno()
    while time.monotonic() < deadline and not re.search(pattern, text):
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            text += chunk.decode(errors='replace')
    return text


def bad_input_session(peer):
    """Handshake, then bad packets; the session must survive each."""
    peer.send_raw(b'+')
    reply = peer.request(b'qSupported:multiprocess+;swbreak+;hwbreak+')
    check(reply is not None and b'PacketSize=' in reply, 'qSupported answered')

    # A bad checksum is NAKed and nothing is executed.
    peer.send_raw(b'$?#00')
    check(peer.read_byte() == b'-', 'bad checksum is NAKed')

    # Oversized: consumed to its end, answered E01.
    reply = peer.request(b'X0,1:' + b'a' * 0x5000)
    check(reply == b'E01', 'oversized packet answered E01 (got %r)' % (reply[:20] if reply else None))

    malformed = [b'm', b'mzz,4', b'm1000', b'M0,4:zz', b'M0,4:0011', b'X0,4:',
                 b'p', b'pzz', b'P1=', b'Pzz=00', b'G00', b'Hgpzz', b'Hx1',
                 b'Z0', b'Z0,zz,1', b'z9,0,0', b'vCont;q', b'vCont;c:zz',
                 b'C', b'Szz', b'T', b'Tpzz', b'qXfer:features:read:target.xml:zz',
                 b'qXfer:features:read:nosuch.xml:0,10', b'qXfer:', b'qXfer:auxv:write::0:00',
                 b'vFile:open:zz', b'vFile:pread:99,10,0', b'vFile:close:zz',
                 b'QPassSignals:zz', b'\x01\x02\xff', b'qRcmd,zz']
    for pkt in malformed:
        reply = peer.request(pkt)
        ok = reply is not None and (reply == b'' or reply.startswith(b'E') or
                                    reply.startswith(b'F-1'))
        check(ok, 'malformed %r gets an error or empty reply (got %r)' % (pkt, reply))
        # ...and the session goes on.
        reply = peer.request(b'?')
        if not (reply and reply.startswith(b'T05')):
            check(False, 'session goes on after %r (got %r)' % (pkt, reply))
            return
    check(True, 'session answered ? after every malformed packet')

    # Out of sequence: a packet while the program runs gets E01; Ctrl-C
    # then stops it with SIGINT.
    peer.send_raw(frame(b'vCont;c'))
    time.sleep(0.3)
    reply = peer.request(b'g')
    check(reply == b'E01', 'packet while running answered E01 (got %r)' % reply)
    peer.send_raw(b'\x03')
    reply = peer.read_packet()
    check(reply is not None and reply.startswith(b'T02'),
          'Ctrl-C stops the program with SIGINT (got %r)' % reply)


def check_ended(proc, pid, server_ends, program_ends):
    """ptrev exits within 10 s, and the program it served is gone."""
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    check(rc is not None, '%s (rc %s)' % (server_ends, rc))
    check(pid is not None and wait_dead(pid), program_ends)


def serve_stdio(ptrev, prog):
    """ptrev serve --stdio on prog, and a Peer on its protocol stream."""
    proc = subprocess.Popen([ptrev, 'serve', '--stdio', '--', prog, 'long'],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)

    def write(data):
        proc.stdin.write(data)
        proc.stdin.flush()
    return proc, Peer(write, proc.stdout.fileno())


def test_stdio(ptrev, prog):
    proc, peer = serve_stdio(ptrev, prog)
    err = read_stderr_until(proc, r'pid = \d+')
    pid = program_pid(err)
    check(pid is not None and pid_alive(pid), 'stdio: program started (%s)' % pid)
    try:
        bad_input_session(peer)
        # Dropping the connection: ptrev exits and takes the program with it.
        proc.stdin.close()
        proc.stdout.close()
        check_ended(proc, pid, 'stdio: ptrev exits when gdb goes away',
                    'stdio: program killed on disconnect')
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_tcp(ptrev, prog, while_running):
    proc = subprocess.Popen([ptrev, 'serve', '--listen', '127.0.0.1:0', '--', prog, 'long'],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    what = 'tcp (drop while running)' if while_running else 'tcp (drop while stopped)'
    try:
        err = read_stderr_until(proc, r'Listening on 127\.0\.0\.1:\d+')
        pid = program_pid(err)
        m = re.search(r'Listening on 127\.0\.0\.1:(\d+)', err)
        check(m is not None, '%s: prints Listening on 127.0.0.1:PORT' % what)
        if not m:
            return
        sock = socket.create_connection(('127.0.0.1', int(m.group(1))), timeout=10)
        peer = Peer(sock.sendall, sock.fileno())
        peer.send_raw(b'+')
        reply = peer.request(b'?')
        check(reply is not None and reply.startswith(b'T05'), '%s: stopped at start' % what)
        if while_running:
            peer.send_raw(frame(b'vCont;c'))
            time.sleep(0.3)
        sock.close()
        check_ended(proc, pid, '%s: ptrev exits on disconnect' % what,
                    '%s: program killed on disconnect' % what)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_reconnect(ptrev, prog):
    """--reconnect (gdbserver without --once): a gdb that disconnects, while
    the program is stopped or while it runs, leaves it stopped for the
    next connection; k ends both."""
    proc = subprocess.Popen([ptrev, 'serve', '--reconnect', '--listen', '127.0.0.1:0', '--',
                             prog, 'long'],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = read_stderr_until(proc, r'Listening on 127\.0\.0\.1:\d+')
        pid = program_pid(err)
        port = int(re.search(r'Listening on 127\.0\.0\.1:(\d+)', err).group(1))

        def connect():
            sock = socket.create_connection(('127.0.0.1', port), timeout=10)
            peer = Peer(sock.sendall, sock.fileno())
            peer.send_raw(b'+')
            return sock, peer
        sock, peer = connect()
        first = peer.request(b'?')
        sock.close()  # dropped while stopped
        sock, peer = connect()
        again = peer.request(b'?')
        check(first is not None and again == first,
              'reconnect: the next gdb finds the program where the first left it (%r)' % again)
        peer.send_raw(frame(b'vCont;c'))
        time.sleep(0.3)
        sock.close()  # dropped while it runs
        sock, peer = connect()
        stop = peer.request(b'?')
        check(stop is not None and stop.startswith(b'T') and pid_alive(pid),
              'reconnect: a gdb gone while the program ran leaves it stopped (%r)' % stop)
        peer.send_raw(frame(b'k'))
        sock.close()
        check_ended(proc, pid, 'reconnect: k ends ptrev', 'reconnect: k ends the program')
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_multi(ptrev, prog):
    """--multi (extended-remote): no program until vRun; a vRun gdb gets
    wrong (bad hex, a program that is not there) is an error and the
    session goes on; vKill leaves the server for the next vRun; R restarts
    the last program; monitor exit ends it all."""
    proc = subprocess.Popen([ptrev, 'serve', '--multi', '--listen', '127.0.0.1:0'],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = read_stderr_until(proc, r'Listening on 127\.0\.0\.1:\d+')
        port = int(re.search(r'Listening on 127\.0\.0\.1:(\d+)', err).group(1))
        sock = socket.create_connection(('127.0.0.1', port), timeout=10)
        peer = Peer(sock.sendall, sock.fileno())
        peer.send_raw(b'+')
        check(peer.request(b'!') == b'OK', 'multi: extended mode accepted')
        check(peer.request(b'?') == b'W00', 'multi: no program yet: W00')
        check(peer.request(b'vRun;zz').startswith(b'E'), 'multi: vRun with bad hex: error')
        check(peer.request(b'vRun;' + b'/no/such/program'.hex().encode()).startswith(b'E'),
              'multi: vRun of a missing program: error')
        run = peer.request(b'vRun;' + prog.encode().hex().encode() + b';' + b'long'.hex().encode())
        pids = re.findall(r'pid = (\d+)', read_stderr_until(proc, r'pid = \d+'))
        check(run is not None and run.startswith(b'T') and len(pids) == 1 and pid_alive(int(pids[0])),
              'multi: vRun starts the program, stopped (%r)' % run)
        check(peer.request(b'vKill;%x' % int(pids[0])) == b'OK' and wait_dead(int(pids[0])),
              'multi: vKill ends the program, not the session')
        check(peer.request(b'?') == b'W00', 'multi: after vKill, no program again')
        peer.send_raw(frame(b'R'))
        again = peer.request(b'?')
        pids = re.findall(r'pid = (\d+)', read_stderr_until(proc, r'pid = \d+'))
        check(again is not None and again.startswith(b'T') and len(pids) == 1,
              'multi: R starts the last program again (%r)' % again)
        text, final = monitor(peer, 'exit')
        check_ended(proc, int(pids[0]) if pids else None, 'multi: monitor exit ends ptrev',
                    'multi: ...and the program')
        sock.close()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_listen_default_is_loopback(ptrev, prog):
    """--listen :0 must bind loopback, not every interface."""
    proc = subprocess.Popen([ptrev, 'serve', '--listen', ':0', '--', prog],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = read_stderr_until(proc, r'Listening on \S+')
        check(re.search(r'Listening on 127\.0\.0\.1:\d+', err) is not None,
              'a listen address without a host binds 127.0.0.1 (%s)' % err.strip().splitlines()[-1:])
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_missing_program(ptrev):
    r = subprocess.run([ptrev, 'serve', '--stdio', '--', './no-such-program-xyz'],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    check(r.returncode != 0 and b'no-such-program-xyz' in r.stderr and
          b'No such file' in r.stderr and r.stdout == b'',
          'missing program: clear error, nothing on the protocol stream (%r)' % r.stderr.strip())


def test_program_from_path(ptrev, prog):
    """serve finds a program named without a slash in PATH, as gdbserver
    (through its shell) and `ptrev record` do."""
    proc = subprocess.Popen([ptrev, 'serve', '--listen', '127.0.0.1:0', '--', 'true'],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = read_stderr_until(proc, r'Listening on \S+')
        check(program_pid(err) is not None and 'Listening on' in err,
              'serve -- true: found in PATH and started (%r)' % err.strip())
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # A name without a slash found in the current directory first.
    here = subprocess.Popen([os.path.abspath(ptrev), 'serve', '--listen', '127.0.0.1:0', '--',
                             os.path.basename(prog)], cwd=os.path.dirname(prog),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = read_stderr_until(here, r'Listening on \S+')
        check(program_pid(err) is not None,
              'serve -- NAME: the file in the current directory, as gdbserver (%r)' % err.strip())
    finally:
        os.killpg(here.pid, signal.SIGKILL)
        here.wait()
    r = subprocess.run([ptrev, 'serve', '--stdio', '--', 'no-such-program-xyz'],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    check(r.returncode != 0 and r.stderr.endswith(
        b'ptrev: exec: no-such-program-xyz: not found\n'
        b'During startup program exited with code 127.\nExiting\n'),
          'serve -- NAME not in PATH: says so, as gdbserver (%r)' % r.stderr.strip())


def hex_text(reply):
    """The text of an O packet (None for anything else)."""
    if not reply or not reply.startswith(b'O') or reply == b'OK':
        return None
    return bytes.fromhex(reply[1:].decode()).decode()


def monitor(peer, command):
    """qRcmd: (the text it printed, the final reply)."""
    reply = peer.request(b'qRcmd,' + command.encode().hex().encode())
    text = hex_text(reply)
    if text is None:
        return '', reply
    return text, peer.read_packet()


def test_monitor(ptrev, prog):
    """gdbserver's monitor commands: set debug, set remote-debug, an unknown
    command (an error after the help), exit (the session ends, the program
    with it). GDB's server-mon.exp and monitor-exit-quit.exp check the
    messages through gdb."""
    proc, peer = serve_stdio(ptrev, prog)
    try:
        pid = program_pid(read_stderr_until(proc, r'pid = \d+'))
        text, final = monitor(peer, 'help')
        check('The following monitor commands' in text and final == b'OK',
              'monitor help: the list, then OK (%r %r)' % (text[:40], final))
        text, final = monitor(peer, 'no-such-command')
        check('Unknown monitor command' in text and final.startswith(b'E'),
              'unknown monitor command: says so, then an error reply (%r)' % final)
        text, final = monitor(peer, 'set debug 1')
        check(text == 'Debug output enabled.\n' and final == b'OK', 'monitor set debug 1')
        stop = peer.request(b'vCont;s')
        text, final = monitor(peer, 'set debug 0')
        check(text == 'Debug output disabled.\n', 'monitor set debug 0')
        text, final = monitor(peer, 'set remote-debug 1')
        check(text == 'Protocol debug output enabled.\n', 'monitor set remote-debug 1')
        peer.request(b'qC')
        monitor(peer, 'set remote-debug 0')
        text, final = monitor(peer, 'exit')
        check(text == '' and final == b'OK', 'monitor exit: OK (%r)' % final)
        check_ended(proc, pid, 'monitor exit: ptrev ends', 'monitor exit: the program ends with it')
        err = proc.stderr.read().decode(errors='replace')
        check('ptrev: resume "vCont;s"' in err and
              ('ptrev: stop "%s"' % stop.decode()) in err,
              'set debug 1 logs the resume and its stop on stderr')
        check('ptrev: getpkt "qC"' in err and 'ptrev: putpkt "QC' in err,
              'set remote-debug 1 logs each packet both ways')
        check('resume "qC"' not in err and 'getpkt "vCont;s"' not in err,
              'each log only while it is on')
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def unescape(data):
    """The bytes of a binary reply (RSP escapes: 0x7d, then byte ^ 0x20)."""
    out, i = bytearray(), 0
    while i < len(data):
        if data[i] == 0x7d and i + 1 < len(data):
            out.append(data[i + 1] ^ 0x20)
            i += 2
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


def read_osdata(peer, piece, between=None):
    """The processes document read in pieces of piece bytes, between(offset)
    called after each."""
    doc, off = b'', 0
    while True:
        reply = peer.request(b'qXfer:osdata:read:processes:%x,%x' % (off, piece))
        if not reply or reply[:1] not in (b'm', b'l'):
            return None
        doc += unescape(reply[1:])
        off = len(doc)
        if reply[:1] == b'l':
            return doc
        if between:
            between(off)


def test_osdata_pieces(ptrev, prog):
    """`info os processes` read in pieces while the host's processes change
    (a process listed before the piece read ends): the pieces are cut from
    one snapshot, so the document is whole (built again for each piece it
    was malformed, and gdb said \"Can not fetch data now\": CI's
    ext-run.exp, \"get process list\")."""
    import xml.etree.ElementTree as ET
    sleeper = subprocess.Popen(['sleep', '60'])
    proc, peer = serve_stdio(ptrev, prog)
    try:
        read_stderr_until(proc, r'pid = \d+')
        whole = read_osdata(peer, 4000) or b''
        at = whole.find(b'<column name="pid">%d</column>' % sleeper.pid)

        def kill_sleeper(off):
            if off > at >= 0 and sleeper.poll() is None:
                sleeper.kill()
                sleeper.wait()
        doc = read_osdata(peer, 100, kill_sleeper)
        try:
            items = ET.fromstring(doc[doc.find(b'<osdata'):]).findall('item') if doc else []
            parsed = True
        except ET.ParseError as e:
            items, parsed = [], 'not well-formed: %s' % e
        check(at >= 0 and sleeper.poll() is not None and parsed is True and len(items) > 2,
              'info os processes read in 100-byte pieces, a process listed early gone '
              'meanwhile: one whole document (%s, %d processes)' % (parsed, len(items)))
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_terminal_given(ptrev, prog):
    """In a terminal, the program gets it (its process group is the
    foreground one), as gdbserver gives it; ptrev takes it back at exit."""
    import pty
    import termios
    master, slave = pty.openpty()
    def own_terminal():
        os.setsid()
        import fcntl
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    proc = subprocess.Popen([ptrev, 'serve', '--listen', '127.0.0.1:0', '--', prog, 'long'],
                            stdin=slave, stdout=slave, stderr=slave, preexec_fn=own_terminal)
    os.close(slave)
    out = b''
    deadline = time.monotonic() + 20
    while b'Listening on' not in out and time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 1)
        if r:
            try:
                out += os.read(master, 4096)
            except OSError:
                break
    try:
        pid = program_pid(out.decode(errors='replace'))
        fg = os.tcgetpgrp(master)
        check(pid is not None and fg == pid,
              'in a terminal the program is its foreground group (%s, program %s)' % (fg, pid))
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def main():
    ptrev, progdir = sys.argv[1], sys.argv[2]
    prog = os.path.join(progdir, 'e2e_loop')
    test_missing_program(ptrev)
    test_program_from_path(ptrev, prog)
    test_monitor(ptrev, prog)
    test_osdata_pieces(ptrev, prog)
    test_terminal_given(ptrev, prog)
    test_reconnect(ptrev, prog)
    test_multi(ptrev, prog)
    test_listen_default_is_loopback(ptrev, prog)
    test_stdio(ptrev, prog)
    test_tcp(ptrev, prog, while_running=False)
    test_tcp(ptrev, prog, while_running=True)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
