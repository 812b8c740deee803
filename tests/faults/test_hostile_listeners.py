#!/usr/bin/env python3
"""Hostile sockets during init (docs/security.md, "Listeners").

Runs `spcclrun -n 8 hostile_init` (init, one all-reduce) without an attack,
then with one. Ranks 1..7 wait at a gate until rank 0 is listening (its
rendezvous root at SPCCL_COMM_ID's port; its tcp listener and its fault
service, docs/fault-tolerance.md, found in /proc) and, in the attack runs,
until an attacker holds 300 connections to each:
per target 100 idle, 100 sending random bytes, 100 slow-loris (a byte
every 200 ms). Every run must succeed, and the slowest init of ranks 1..7
with the attack must be at most 1 s slower than without (the best of RUNS
runs each, to keep a loaded machine's noise out). The refusals must be
logged once per source address by the root and by rank 0's listeners, each
followed by one summary with a count per address, whose counts the test
prints (docs/security.md, "Attack table").

usage: test_hostile_listeners.py SPCCLRUN HOSTILE_INIT
"""
import os
import random
import re
import resource
import socket
import subprocess
import sys
import threading
import time

NRANKS = 8
PER_KIND = 100
RUNS = 3
ALLOWED_EXTRA_S = 1.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening_inodes():
    """inode -> (address, port) of every listening TCP socket (IPv4; IPv6 as
    loopback, where a wildcard or v6 listener answers)."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A":  # LISTEN
                        hexaddr, hexport = fields[1].rsplit(":", 1)
                        addr = "::1"
                        if len(hexaddr) == 8:
                            addr = socket.inet_ntoa(bytes.fromhex(hexaddr)[::-1])
                            addr = "127.0.0.1" if addr == "0.0.0.0" else addr
                        found[fields[9]] = (addr, int(hexport, 16))
        except OSError:
            pass
    return found


def listener_ports_of(pid):
    inodes = listening_inodes()
    ports = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            m = re.match(r"socket:\[(\d+)\]", link)
            if m and m.group(1) in inodes:
                ports.add(inodes[m.group(1)])
    except OSError:
        pass
    return ports


def rank_pid(launcher_pid, rank):
    """The pid of the child of spcclrun whose SPCCL_RANK is rank."""
    try:
        children = open(f"/proc/{launcher_pid}/task/{launcher_pid}/children").read().split()
    except OSError:
        return None
    for pid in children:
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if f"SPCCL_RANK={rank}".encode() in env:
            return int(pid)
    return None


class Attacker:
    """Opens PER_KIND idle, random-byte and slow-loris connections to each target."""

    def __init__(self):
        self.stop = threading.Event()
        self.socks = []
        self.lock = threading.Lock()
        self.opened = 0

    def _connect(self, target):
        while not self.stop.is_set():
            s = socket.socket(socket.AF_INET6 if ":" in target[0] else socket.AF_INET)
            s.setblocking(True)
            s.settimeout(0.5)
            try:
                s.connect(target)
                s.setblocking(False)
                return s
            except OSError:
                s.close()
                time.sleep(0.005)
        return None

    def aim(self, target):
        def run():
            for kind in ("idle", "random", "slow") * PER_KIND:
                s = self._connect(target)
                if s is None:
                    return
                with self.lock:
                    self.socks.append((kind, s))
                    self.opened += 1
                if kind == "random":
                    try:
                        s.send(os.urandom(random.randint(1, 4096)))
                    except OSError:
                        pass
        threading.Thread(target=run, daemon=True).start()

    def slow_loris(self):
        def run():
            while not self.stop.wait(0.2):
                with self.lock:
                    for kind, s in self.socks:
                        if kind == "slow":
                            try:
                                s.send(os.urandom(1))
                            except OSError:
                                pass
        threading.Thread(target=run, daemon=True).start()

    def close(self):
        self.stop.set()
        with self.lock:
            for _, s in self.socks:
                s.close()


def run_job(spcclrun, program, attack):
    port = free_port()
    env = dict(os.environ, SPCCL_COMM_ID=f"127.0.0.1:{port}", SPCCL_TIMEOUT_MS="30000")
    for name in ("SPCCL_JOB_SECRET", "SPCCL_JOB_SECRET_FILE", "SPCCL_AUTH"):
        env.pop(name, None)
    attacker = Attacker() if attack else None
    if attacker:
        attacker.aim(("127.0.0.1", port))  # retries until rank 0's root listens
        attacker.slow_loris()
    gate = f"/tmp/hostile_listeners.{os.getpid()}.{port}"
    wrapper = (f'[ "$SPCCL_RANK" = 0 ] || while [ ! -e {gate} ]; do sleep 0.005; done; '
               f'exec "$0"')
    start = time.monotonic()
    job = subprocess.Popen([spcclrun, "-n", str(NRANKS), "--timeout", "90", "--", "sh", "-c",
                            wrapper, program],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Rank 0's listeners: the root, its tcp listener and its fault service
    # (both opened before the rendezvous).
    deadline = time.monotonic() + 20
    ports = set()
    while job.poll() is None and time.monotonic() < deadline:
        pid = rank_pid(job.pid, 0)
        ports = listener_ports_of(pid) if pid else set()
        if ("127.0.0.1", port) in ports and len(ports) >= 3:
            break
        time.sleep(0.005)
    if len(ports) < 3:
        sys.exit(f"hostile_listeners: rank 0 never listened on the root, a tcp port and its "
                 f"fault service: {ports}")
    if attacker:
        for target in sorted(ports - {("127.0.0.1", port)}):
            attacker.aim(target)
        while attacker.opened < 9 * PER_KIND and time.monotonic() < deadline:
            time.sleep(0.01)
    open(gate, "w").close()
    try:
        out, err = job.communicate(timeout=120)
    finally:
        os.unlink(gate)
    wall = time.monotonic() - start
    opened = attacker.opened if attacker else 0
    if attacker:
        attacker.close()
    if job.returncode != 0:
        sys.exit(f"hostile_listeners: job {'with' if attack else 'without'} the attack failed "
                 f"({job.returncode}):\n{out}\n{err[-4000:]}")
    times = [float(t) for r, t in re.findall(r"rank (\d+) init_ms ([0-9.]+)", out) if r != "0"]
    if len(times) != NRANKS - 1:
        sys.exit(f"hostile_listeners: expected {NRANKS} init times:\n{out}\n{err[-2000:]}")
    refusals = len(re.findall(r"refused", err))
    return max(times) / 1000.0, wall, opened, refusals, err


# The two logs of refusals (src/core/bootstrap.cc's RefusalLog, and
# connectMesh in src/core/comm.cc): a first WARN per source address, then
# one summary "refused N connection(s) ... from M address(es): SRC xK, ...".
REFUSAL_LOGS = {
    "root": (r"rendezvous root: refused connection from \S+: .*\(further refusals from (\S+) "
             r"are counted\)",
             r"rendezvous root: refused (\d+) connection\(s\) from \d+ address\(es\): (.*)"),
    "rank 0": (r"rank 0 refused a connection from \S+: .*\(further refusals from (\S+) are "
               r"counted\)",
               r"rank 0 refused (\d+) connection\(s\) during setup from \d+ address\(es\): "
               r"(.*)"),
}


def refusal_counts(err):
    """listener -> (first WARN lines per source, total refused per the summary), or an error."""
    found = {}
    for listener, (first, summary) in REFUSAL_LOGS.items():
        firsts = re.findall(first, err)
        summaries = re.findall(summary, err)
        if not firsts and not summaries:
            continue
        per_source = {src: firsts.count(src) for src in set(firsts)}
        if any(c != 1 for c in per_source.values()):
            return f"{listener} logged a source's first refusal more than once: {per_source}"
        if len(summaries) != 1:
            return f"{listener} logged {len(summaries)} refusal summaries (expected 1)"
        total, listed = summaries[0]
        counted = {m.group(1): int(m.group(2)) for m in re.finditer(r"(\S+) x(\d+)", listed)}
        if set(counted) != set(per_source) or sum(counted.values()) != int(total):
            return (f"{listener}'s summary ({listed}) does not match its first refusals "
                    f"({per_source})")
        found[listener] = int(total)
    return found


def main():
    spcclrun, program = sys.argv[1], sys.argv[2]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4 * 3 * PER_KIND + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    base = [run_job(spcclrun, program, False) for _ in range(RUNS)]
    hostile = [run_job(spcclrun, program, True) for _ in range(RUNS)]
    best_base = min(b[0] for b in base)
    best_hostile = min(h[0] for h in hostile)
    print(f"hostile_listeners: slowest init of ranks 1..7 without the attack "
          f"{', '.join(f'{b[0]:.3f}' for b in base)} s; with "
          f"{', '.join(f'{h[0]:.3f}' for h in hostile)} s "
          f"(attack connections opened: {', '.join(str(h[2]) for h in hostile)}; "
          f"refusal WARN lines: {', '.join(str(h[3]) for h in hostile)})")
    if min(h[2] for h in hostile) < 9 * PER_KIND:
        sys.exit("hostile_listeners: the attacker never got its connections in")
    if not any(h[3] > 0 for h in hostile):
        sys.exit("hostile_listeners: no refusal was logged:\n" + hostile[0][4][-3000:])
    logged = {}
    for h in hostile:
        counts = refusal_counts(h[4])
        if isinstance(counts, str):
            sys.exit(f"hostile_listeners: {counts}:\n{h[4][-3000:]}")
        for listener, total in counts.items():
            logged.setdefault(listener, []).append(total)
    for listener in REFUSAL_LOGS:
        if listener not in logged:
            sys.exit(f"hostile_listeners: the {listener} never logged a refusal:\n"
                     f"{hostile[0][4][-3000:]}")
    print("hostile_listeners: refusals logged once per source, then counted: " +
          "; ".join(f"{listener} {', '.join(map(str, totals))}"
                    for listener, totals in logged.items()))
    extra = best_hostile - best_base
    if extra > ALLOWED_EXTRA_S:
        sys.exit(f"hostile_listeners: the attack made init {extra:.2f} s slower "
                 f"(> {ALLOWED_EXTRA_S} s)")
    print(f"hostile_listeners: OK, the attack cost {extra:+.3f} s")


if __name__ == "__main__":
    main()
