#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Clients that hold connections and send no request: the idle and slow
clients of `blkwise export`'s no-lock-out test (tests/test_export_tls.sh).

idle-clients.py PORT N NADDR SECS [BYTES]
  N connections to 127.0.0.1:PORT from source addresses 127.0.0.2 ..
  127.0.0.(NADDR+1) in turn, each sending BYTES (backslash escapes; default
  nothing) and then nothing more, held SECS seconds.  Prints "ready:
  connected C, failed F" once all are made, and at the end "closed by the
  server: K" (the connections the server had closed by then).
"""
import socket
import sys
import time


def main():
    port, n, naddr, secs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    data = sys.argv[5].encode().decode("unicode_escape").encode("latin-1") if len(sys.argv) > 5 else b""
    socks, failed = [], 0
    for i in range(n):
        s = socket.socket()
        s.bind(("127.0.0.%d" % (2 + i % naddr), 0))
        try:
            s.connect(("127.0.0.1", port))
            if data:
                s.sendall(data)
            socks.append(s)
        except OSError:
            failed += 1
    print("ready: connected %d, failed %d" % (len(socks), failed), flush=True)
    time.sleep(secs)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print("closed by the server: %d" % closed, flush=True)


if __name__ == "__main__":
    main()
