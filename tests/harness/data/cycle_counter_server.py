#!/usr/bin/env python3
"""A stand-in for a server built with a processor clock (valkey 8.1+ by
default): it answers TIME from the virtual clock page, exactly for its first
two TIMEs and then plus a few microseconds, as such a build does between its
gettimeofday calls, and reports `monotonic_clock:X86 TSC` in INFO. Just
enough RESP for RedisServer's start: PING, AUTH, INFO, TIME; +OK otherwise.

Usage (as RedisServer spawns a server): cycle_counter_server.py CONFIG
"""
import mmap
import os
import re
import socket
import struct
import sys

config = open(sys.argv[1]).read()
path = re.search(r'^unixsocket "?([^"\n]+)"?$', config, re.M).group(1)
with open(os.environ["XACKLY_CLOCK_PAGE"], "rb") as f:
    page = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)


def now_ns():
    return struct.unpack_from("<q", page, 8)[0]  # slot 1: the virtual ns


def bulk(s):
    return b"$%d\r\n%s\r\n" % (len(s), s)


def read_command(stream):
    line = stream.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return line.split()
    argv = []
    for _ in range(int(line[1:])):
        n = int(stream.readline()[1:])
        argv.append(stream.read(n + 2)[:-2])
    return argv


listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
listener.listen(8)
times = 0
while True:
    conn, _ = listener.accept()
    stream = conn.makefile("rb")
    while (argv := read_command(stream)) is not None:
        name = argv[0].upper() if argv else b""
        if name == b"PING":
            out = b"+PONG\r\n"
        elif name == b"INFO":
            out = bulk(b"# Server\r\nredis_version:7.0.99\r\nmonotonic_clock:X86 TSC @ 2000.00 ticks/us\r\n")
        elif name == b"TIME":
            times += 1
            us = now_ns() // 1000 + (0 if times <= 2 else 37)
            out = b"*2\r\n" + bulk(b"%d" % (us // 1_000_000)) + bulk(b"%d" % (us % 1_000_000))
        else:
            out = b"+OK\r\n"
        conn.sendall(out)
    conn.close()
