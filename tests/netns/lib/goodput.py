"""Bounded TCP goodput probe for `netlab check` (no iperf3 dependency).

  goodput.py recv HOST PORT          accept one connection, count bytes until
                                     the sender closes; print one line
                                     "bytes B seconds S start T0 end T1
                                     goodput_mbps X" (T0, T1: CLOCK_MONOTONIC,
                                     comparable between receivers run at once)
  goodput.py send HOST PORT SECONDS [START_AT]
                                     connect (retrying briefly while the
                                     receiver starts), stream for SECONDS;
                                     with START_AT (Unix time), wait until then
                                     after connecting, so that senders run at
                                     once start streaming together

The receiver measures from the first byte to EOF, so connection set-up and
slow start outside the transfer do not count against the link.
"""
import socket
import sys
import time

CHUNK = 1 << 20
CONNECT_DEADLINE_S = 10.0
IO_TIMEOUT_S = 30.0


def recv(host: str, port: int) -> None:
    with socket.create_server((host, port)) as srv:
        srv.settimeout(IO_TIMEOUT_S)
        conn, _ = srv.accept()
    with conn:
        conn.settimeout(IO_TIMEOUT_S)
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        total = conn.recv_into(view)
        start = time.monotonic()
        while True:
            got = conn.recv_into(view)
            if got == 0:
                break
            total += got
        end = time.monotonic()
        elapsed = end - start
    print(f"bytes {total} seconds {elapsed:.3f} start {start:.6f} end {end:.6f} "
          f"goodput_mbps {total * 8 / elapsed / 1e6:.1f}")


def send(host: str, port: int, seconds: float, start_at: float = 0.0) -> None:
    deadline = time.monotonic() + CONNECT_DEADLINE_S
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=IO_TIMEOUT_S)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    payload = b"\0" * CHUNK
    with sock:
        wait = start_at - time.time()
        if wait > 0:
            time.sleep(min(wait, CONNECT_DEADLINE_S))
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        sock.recv(1)  # wait for the receiver to finish reading


def main() -> None:
    role, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if role == "recv":
        recv(host, port)
    elif role == "send":
        send(host, port, float(sys.argv[4]), float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)
    else:
        sys.exit(f"unknown role {role!r}")


if __name__ == "__main__":
    main()
