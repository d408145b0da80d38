"""The baseline: the simplest receiver this harness can run, to show its ceiling on this host.

It reads each TCP stream and appends whole lines to one file, with no parsing and no splitting. Lines that
contain DONE also go to done.log, which the watcher's SEC rule needs to end the run. One thread, one
selector; writes go straight to the file descriptors, unbuffered.
"""

import os
import selectors
import signal
import socket
import sys

LOG_DIR = "/var/log/bench"
# syslogbench/contract.py: CENTRAL_PORT (the image carries no syslogbench package; a unit test holds them equal).
PORT = int(os.environ.get("CENTRAL_PORT", "514"))
CHUNK = 256 * 1024
VERSION = "syslogbench-baseline 1"


def open_append(name: str) -> int:
    return os.open(os.path.join(LOG_DIR, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def write_lines(chunk: bytes, out: int | None, done: int | None) -> None:
    if out is None:  # --discard: the calibration sink
        return
    os.write(out, chunk)
    if b"DONE" in chunk:
        for line in chunk.splitlines(keepends=True):
            if b"DONE" in line:
                os.write(done, line)


def serve(out: int | None, done: int | None) -> None:
    server = socket.create_server(("0.0.0.0", PORT), backlog=256)
    server.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(server, selectors.EVENT_READ)
    partial: dict[socket.socket, bytes] = {}
    while True:
        for key, _ in selector.select():
            if key.fileobj is server:
                conn, _ = server.accept()
                conn.setblocking(False)
                selector.register(conn, selectors.EVENT_READ)
                partial[conn] = b""
                continue
            conn = key.fileobj
            data = conn.recv(CHUNK)
            buffer = partial[conn] + data
            if not data:  # the sender closed: keep an unterminated last line too
                if buffer:
                    write_lines(buffer + b"\n", out, done)
                selector.unregister(conn)
                conn.close()
                del partial[conn]
                continue
            cut = buffer.rfind(b"\n") + 1
            if cut:
                write_lines(buffer[:cut], out, done)
            partial[conn] = buffer[cut:]


def main() -> None:
    if "--version" in sys.argv:
        print(f"{VERSION} (Python {sys.version.split()[0]})")
        return
    # Every write is already in the file, so a stop needs no flushing: exit 0 like the daemons do.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if "--discard" in sys.argv:  # `python -m syslogbench calibrate`: read and drop everything
        serve(None, None)
    serve(open_append("test.baseline.all.log"), open_append("done.log"))


if __name__ == "__main__":
    main()
