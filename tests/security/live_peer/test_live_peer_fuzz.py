#!/usr/bin/env python3
"""Live-peer fuzzing (docs/security.md, "Live-peer fuzzing").

Each iteration starts a job of n = 2 or 3 real processes on loopback. One
of them, the fake rank, holds the real secret and completes the real
handshake (it is the library itself, its transport wrapped:
live_peer/mutating_net.h), then rewrites one message of a collective
(mutation.h: bit flips in headers and payloads, header fields, truncation,
extension, duplicates, drops, a close in mid-frame, raw bytes on the
socket). Every real rank must, within the call's deadline, either fail
with an error that names the fake rank, or return the right result (the
mutation changed nothing that matters). A crash, a hang (no answer by the
deadline plus a margin), an error that does not name the fake rank, or a
success with a wrong result fails the test.

The right result: dense and sparse calls check themselves against an
exact reference; every result is also compared, by hash, with a census
run of the same job without a mutation (the compressed all-reduce is
lossy, so that is its only check).

Payload bit flips: without SPCCL_WIRE_CHECKSUM nothing can tell a flipped
value from a rank's own input, so a wrong result there is expected and
counted, not a failure; with SPCCL_WIRE_CHECKSUM=crc32c every flip must be
caught (the mutation happens below the engine, where wire corruption
would).

usage: test_live_peer_fuzz.py LIVE_PEER_FUZZ
environment:
  SPCCL_LIVE_FUZZ_SECONDS     mutation time (default 45; the census runs come on top)
  SPCCL_LIVE_FUZZ_ITERATIONS  stop after this many iterations instead (0: by time)
  SPCCL_LIVE_FUZZ_SEED        the run's seed (default 1); each iteration prints its own
  SPCCL_LIVE_FUZZ_TRANSPORTS  default "tcp,shm"
  SPCCL_LIVE_FUZZ_WORKLOADS   default every workload
  SPCCL_LIVE_FUZZ_CHECKSUM    "crc32c" or "off", or "both" (default): iterations alternate
  SPCCL_LIVE_FUZZ_REPLAY      "WORKLOAD TRANSPORT N CHECKSUM FAKE KIND INDEX SEED" (as an
                              iteration's line prints them): runs that one job and prints
                              every rank's result
"""
import collections
import json
import os
import random
import re
import socket
import subprocess
import sys
import time

WORKLOADS = ["dense", "sparse_coo", "sparse_bitmap", "sparse_packed", "compressed_twoshot",
             "compressed_ring"]
# Kind -> (class of message it targets, weight). Drops wait for the
# deadline, so they are rarer.
KINDS = {
    "header_bitflip": ("header", 6),
    "header_field": ("header", 6),
    "huge_length": ("header", 2),
    "header_truncate": ("header", 2),
    "consistent_truncate": ("header", 3),
    "payload_bitflip": ("payload", 6),
    "payload_truncate": ("payload", 3),
    "payload_extend": ("payload", 3),
    "duplicate": ("any", 3),
    "drop": ("any", 1),
    "close_mid_frame": ("any", 2),
    "raw_huge_prefix": ("any", 2),
    "raw_garbage": ("any", 2),
}
RAW_KINDS = {"raw_huge_prefix", "raw_garbage"}  # tcp only: bytes on the socket
# Jobs that found a bug (docs/security.md, "Live-peer fuzzing"), replayed
# before the random ones: WORKLOAD TRANSPORT N CHECKSUM FAKE KIND INDEX SEED.
REGRESSIONS = [
    # a short payload taken as whole (engine.cc checkPayload)
    "dense shm 3 off 0 payload_truncate 0 2927771633508938553",
    "dense tcp 2 off 0 payload_truncate 0 1997776823475070969",
    "sparse_bitmap shm 2 off 1 drop 5 8574435967216483772",
    "compressed_ring shm 2 off 0 duplicate 4 7603813313402156407",
    # a decoder's error named no rank (sparse_messages.cc, dense_stage.cc)
    "sparse_packed tcp 2 off 1 duplicate 4 3188523523289869369",
    "sparse_coo shm 3 off 2 consistent_truncate 4 2711814773842945587",
    # the third rank never heard why (coll_context.cc runCollective)
    "compressed_ring shm 3 off 1 consistent_truncate 4 2087463472537058508",
    # a short agreement record accepted (small_allgather.cc)
    "sparse_bitmap shm 2 off 0 consistent_truncate 0 7747185590409115716",
]
CALL_TIMEOUT_MS = 4000
# A rank must answer within the call's deadline; the margin covers process
# start, init and exit on a loaded 2-core machine.
ANSWER_SLACK_MS = 3000
KILL_AFTER_S = 30


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(binary, workload, transport, n, checksum, roles):
    """roles[r]: extra argv of rank r. Returns per rank (rc, result dict or None, stderr)."""
    port = free_port()
    secret = os.urandom(32).hex()
    procs = []
    for r in range(n):
        env = dict(os.environ, SPCCL_COMM_ID=f"127.0.0.1:{port}", SPCCL_RANK=str(r),
                   SPCCL_NRANKS=str(n), SPCCL_JOB_SECRET=secret, SPCCL_TRANSPORT=transport,
                   SPCCL_TIMEOUT_MS=str(CALL_TIMEOUT_MS), SPCCL_WIRE_CHECKSUM=checksum)
        env.pop("SPCCL_JOB_SECRET_FILE", None)
        env.pop("SPCCL_AUTH", None)
        procs.append(subprocess.Popen([binary, workload] + roles[r], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + KILL_AFTER_S
    outcomes = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            rc = "hang"
        m = re.search(r"^livefuzz: result (\{.*\})$", out, re.M)
        mutation = re.search(r"^livefuzz: mutation: (.*)$", out, re.M)
        result = json.loads(m.group(1)) if m else None
        if result is not None and mutation:
            result["mutation"] = mutation.group(1)
        outcomes.append((rc, result, err))
    return outcomes


class Census:
    """What each rank of a job sends and gets when nobody mutates."""

    def __init__(self, binary, checksum):
        self.binary = binary
        self.checksum = checksum
        self.known = {}

    def get(self, workload, transport, n):
        key = (workload, transport, n)
        if key not in self.known:
            outcomes = run_job(self.binary, workload, transport, n, self.checksum,
                               [["census"]] * n)
            ranks = []
            for r, (rc, result, err) in enumerate(outcomes):
                if rc != 0 or result is None or result["status"] != "ok":
                    sys.exit(f"live_peer_fuzz: census of {key} failed on rank {r} (rc {rc}):\n"
                             f"{result}\n{err[-3000:]}")
                ranks.append(result)
            self.known[key] = ranks
        return self.known[key]


def judge(rank, fake, rc, result, err, census_rank, kind, checksum):
    """One real rank's outcome: (category, is_violation, detail)."""
    if rc == "hang":
        return "hang", True, "no answer within the deadline"
    if "AddressSanitizer" in err or "UndefinedBehaviorSanitizer" in err or "runtime error:" in err:
        return "crash", True, err[-3000:]
    if rc not in (0, 1, 2) or result is None:
        return "crash", True, f"exit {rc}: {err[-3000:]}"
    status = result["status"]
    # init_error: the fake rank left init first and its first frames of the
    # call reached a rank still in init's last exchange; that rank's init
    # fails instead of its call, under the same rule.
    unprotected = kind == "payload_bitflip" and checksum == "off"
    if status in ("error", "init_error"):
        if not re.search(rf"\brank {fake}\b", result["error"]):
            # Without the checksum a flipped value is the fake rank's word:
            # a rank that got a flipped agreement header fails naming it,
            # the others, which got the right one, learn from that rank.
            if unprotected:
                return "error_relayed", False, result["error"]
            return "error_unnamed", True, result["error"]
        if result.get("elapsed_ms", 0) > CALL_TIMEOUT_MS + ANSWER_SLACK_MS:
            return "error_late", True, f"{result['elapsed_ms']} ms: {result['error']}"
        return "error_named", False, result["error"]
    right = status == "ok" and result["hash"] == census_rank["hash"]
    if right:
        return "correct", False, ""
    detail = result.get("mismatch") or f"hash {result['hash']} != census {census_rank['hash']}"
    if unprotected:
        return "wrong_unprotected", False, detail
    return "wrong", True, detail


def main():
    binary = sys.argv[1]
    default_seconds = os.environ.get("SPCCL_LIVE_FUZZ_DEFAULT_SECONDS", "45")  # set by CMake
    seconds = float(os.environ.get("SPCCL_LIVE_FUZZ_SECONDS", default_seconds))
    iterations = int(os.environ.get("SPCCL_LIVE_FUZZ_ITERATIONS", "0"))
    seed = int(os.environ.get("SPCCL_LIVE_FUZZ_SEED", "1"))
    transports = os.environ.get("SPCCL_LIVE_FUZZ_TRANSPORTS", "tcp,shm").split(",")
    workloads = os.environ.get("SPCCL_LIVE_FUZZ_WORKLOADS", ",".join(WORKLOADS)).split(",")
    replay = os.environ.get("SPCCL_LIVE_FUZZ_REPLAY")
    if replay:
        workload, transport, n, checksum, fake, kind, index, mseed = replay.split()
        roles = [[] for _ in range(int(n))]
        roles[int(fake)] = [kind, index, mseed]
        for r, (rc, result, err) in enumerate(run_job(binary, workload, transport, int(n),
                                                      checksum, roles)):
            print(f"rank {r}: exit {rc}: {json.dumps(result)}\n{err[-2000:]}")
        return
    checksum_mode = os.environ.get("SPCCL_LIVE_FUZZ_CHECKSUM", "both")
    checksums = ["crc32c", "off"] if checksum_mode == "both" else [checksum_mode]
    rng = random.Random(seed)
    censuses = {c: Census(binary, c) for c in checksums}
    tally = collections.defaultdict(collections.Counter)  # kind -> category -> ranks
    per_kind = collections.Counter()
    violations = []
    start = time.monotonic()
    done = 0
    not_reached = 0
    pending = list(REGRESSIONS)
    while pending or (iterations and done < iterations) or (not iterations and
                                                            time.monotonic() - start < seconds):
        if pending:
            workload, transport, n, checksum, fake, kind, index, mseed = pending.pop(0).split()
            n, fake, index, mseed = int(n), int(fake), int(index), int(mseed)
            censuses.setdefault(checksum, Census(binary, checksum))
            census = censuses[checksum].get(workload, transport, n)
        else:
            checksum = checksums[done % len(checksums)]
            workload = rng.choice(workloads)
            transport = rng.choice(transports)
            n = rng.choice([2, 3])
            kinds = [k for k in KINDS if transport == "tcp" or k not in RAW_KINDS]
            kind = rng.choices(kinds, weights=[KINDS[k][1] for k in kinds])[0]
            census = censuses[checksum].get(workload, transport, n)
            fake = rng.randrange(n)
            target = KINDS[kind][0]
            counts = {"header": census[fake]["headers"], "payload": census[fake]["payloads"]}
            counts["any"] = counts["header"] + counts["payload"]
            if counts[target] == 0:
                continue
            index = rng.randrange(counts[target])
            mseed = rng.getrandbits(63)
        roles = [[] for _ in range(n)]
        roles[fake] = [kind, str(index), str(mseed)]
        outcomes = run_job(binary, workload, transport, n, checksum, roles)
        done += 1
        per_kind[kind] += 1
        fake_result = outcomes[fake][1] or {}
        what = fake_result.get("mutation", "(exited)" if fake_result == {} else "(not reached)")
        if what == "(not reached)":
            not_reached += 1  # the fake rank sent fewer messages than in its census
        line = []
        named_fake = {r for r, (rc, result, err) in enumerate(outcomes)
                      if r != fake and result and result["status"] in ("error", "init_error")
                      and re.search(rf"\brank {fake}\b", result["error"])}
        for r, (rc, result, err) in enumerate(outcomes):
            if r == fake:
                continue
            category, bad, detail = judge(r, fake, rc, result, err, census[r], kind, checksum)
            # A relay: the error names another real rank whose own error names
            # the fake one (a 3-rank cascade; the peer it names did send it
            # something bad, because the fake rank made that peer fail).
            if category == "error_unnamed" and any(
                    re.search(rf"\brank {q}\b", detail) for q in named_fake - {r}):
                category, bad = "error_relayed", False
            tally[kind][category] += 1
            line.append(f"rank {r}: {category}")
            if bad:
                violations.append(
                    f"{workload} {transport} n={n} checksum={checksum} fake rank {fake}: "
                    f"{kind} {index} {mseed} ({what}): rank {r} {category}: {detail}")
        print(f"[{done}] {workload} {transport} n={n} checksum={checksum} fake={fake} "
              f"{kind} index={index} seed={mseed}: {what} -> {', '.join(line)}", flush=True)

    categories = ["error_named", "correct", "wrong_unprotected", "error_relayed", "wrong",
                  "error_unnamed",
                  "error_late", "hang", "crash"]
    print(f"\nlive_peer_fuzz: {done} iterations in {time.monotonic() - start:.0f} s "
          f"(seed {seed}, transports {','.join(transports)}, checksum {checksum_mode}; "
          f"{not_reached} mutations not reached)")
    print("| mutation | iterations | " + " | ".join(categories) + " |")
    print("|---|---|" + "---|" * len(categories))
    for kind in KINDS:
        if per_kind[kind]:
            print(f"| {kind} | {per_kind[kind]} | " +
                  " | ".join(str(tally[kind][c]) for c in categories) + " |")
    if violations:
        print(f"\nlive_peer_fuzz: {len(violations)} violation(s):")
        for v in violations:
            print("  " + v)
        sys.exit(1)
    if done == 0:
        sys.exit("live_peer_fuzz: no iteration ran")
    print("live_peer_fuzz: OK")


if __name__ == "__main__":
    main()
