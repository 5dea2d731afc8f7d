#!/usr/bin/env python3
"""A burst against a running creased, for counting its instructions per event under callgrind.

usage: burst-client.py SOCKET EVENTS_FILE SUBSCRIBERS

Subscribes SUBSCRIBERS connections to the layout topic, sends EVENTS_FILE (NDJSON) from one
more connection in 64 KiB writes, as `crease bench burst` does, waits for the reply to a
closing `sync`, and leaves the subscribers reading until the daemon closes them.
"""
import selectors
import socket
import sys
import threading


def connect(path: str) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def wait_for(s: socket.socket, marker: bytes) -> None:
    buf = b''
    while marker not in buf:
        data = s.recv(65536)
        if not data:
            sys.exit('creased closed the connection')
        buf += data


def drain(subscribers: list[socket.socket]) -> None:
    sel = selectors.DefaultSelector()
    for s in subscribers:
        sel.register(s, selectors.EVENT_READ)
    open_count = len(subscribers)
    while open_count:
        for key, _ in sel.select():
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if not sock.recv(1 << 20):
                sel.unregister(sock)
                open_count -= 1


def main() -> None:
    path, events, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    subscribers: list[socket.socket] = []
    for _ in range(count):
        s = connect(path)
        s.sendall(b'{"cmd":"subscribe","topics":["layout"],"id":"s"}\n')
        wait_for(s, b'"id":"s"')
        subscribers.append(s)
    threading.Thread(target=drain, args=(subscribers,), daemon=True).start()
    with open(events, 'rb') as f:
        data = f.read()
    publisher = connect(path)
    for offset in range(0, len(data), 65536):
        publisher.sendall(data[offset:offset + 65536])
    publisher.sendall(b'{"cmd":"sync","id":"done"}\n')
    wait_for(publisher, b'"id":"done"')


if __name__ == '__main__':
    main()
