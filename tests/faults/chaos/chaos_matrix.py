#!/usr/bin/env python3
"""The chaos matrix on one host: fault x transport x ranks x phase.

Each case is one job of chaos_rank processes under `spcclrun --keep-going`
with a fault the ranks inject into themselves (chaos_rank --fault, so the
phase is exact: during creation, at a random point inside a collective,
inside the agreement, inside the shrink, inside spcclCommAbort, or a
SIGSTOP for longer than the deadline). Every case checks:

- no survivor finished with a wrong result (chaos_rank compares every
  dense and sparse result bit for bit, the compressed one within its bound),
  and no process crashed or hung;
- each survivor ended as the case allows: recovered (shrank and finished
  right), alone (too few left), or, for a death during creation, a failed
  creation;
- a stopped rank, resumed, got spcclRevoked (8) from its first call and left
  without disturbing the others;
- detection: each survivor's first failed call came within T + 1 s of the
  fault (T = SPCCL_TIMEOUT_MS), and recovery within 3 T + 2 s.

usage: chaos_matrix.py SPCCLRUN CHAOS_RANK [--transports tcp,shm,ucx]
       [--sizes 2,3,8] [--cases ...] [--repeat K] [--seed S] [--timeout-ms T]
       [--markdown FILE] [--only-with-env VAR]
Prints one table row per case; exit status 1 if any case broke a rule.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

KV = re.compile(r'(\w+)=("[^"]*"|\S+)')
RC_NAMES = {5: "RemoteError", 7: "Timeout", 8: "Revoked", 1: "SystemError", 4: "InvalidUsage"}
EXIT_NAMES = {0: "recovered", 3: "left", 4: "alone", 5: "gave up", 7: "init failed",
              1: "WRONG"}


@dataclasses.dataclass
class Case:
    name: str         # fault/phase, as in the table
    min_ranks: int    # smallest job that makes sense
    faults: list      # (template, which victim) pairs; {v0}, {v1}: the drawn victims
    survivor_exits: set  # what a survivor may end with
    victims_exit: set | None = None  # what a resumed victim may end with (None: it dies)
    late_on: tuple = ()  # transports where a survivor may be agreed failed (3) all the same


STEP = 5  # faults land in step 5: the first steps measure a call's length


def cases(timeout_ms: int) -> dict[str, Case]:
    stop_ms = 2 * timeout_ms + 1000
    return {c.name: c for c in [
        Case("kill/init", 2, ["kill:{v0}:init"], {0, 4, 7}),
        Case("kill/mid-collective", 2, [f"kill:{{v0}}:mid:{STEP}"], {0, 4}),
        # A second failure: every survivor recovers. The survivors' failed
        # shrinks end up to 2 T + 1 s apart and the agreement after a failed
        # shrink waits that long for them (core/agreement.cc); on ucx a
        # creation that fails can take longer still, and a survivor that
        # late is agreed failed (3): an error, not wrong data.
        Case("kill/agree", 3, [f"kill:{{v0}}:mid:{STEP}", "kill:{v1}:agree"], {0, 4},
             late_on=("ucx",)),
        Case("kill/shrink", 3, [f"kill:{{v0}}:mid:{STEP}", "kill:{v1}:shrink"], {0, 4},
             late_on=("ucx",)),
        Case("kill/abort", 2, [f"kill:{{v0}}:abort:{STEP}"], {0, 4}),
        # The resumed rank's agreement on the old communicator finds the
        # others gone from it: it is told it failed (3), decides alone (4)
        # or reaches no decision (5); all three are errors, none disturbs.
        Case("stop+cont", 2, [f"stop:{{v0}}:{STEP}:{stop_ms}"], {0, 4}, victims_exit={3, 4, 5}),
    ]}


def parse_log(path: pathlib.Path) -> list[tuple[str, dict[str, str]]]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("chaos: "):
            rest = line[len("chaos: "):]
            out.append((rest.split(" ", 1)[0], {k: v.strip('"') for k, v in KV.findall(rest)}))
    return out


def rank_statuses(stderr: str, n: int) -> dict[int, int]:
    """Per rank: its exit status, or 128 + signal, from spcclrun's lines."""
    status = {r: 0 for r in range(n)}
    for m in re.finditer(r"rank (\d+) \(pid \d+\) exited with status (\d+)", stderr):
        status[int(m.group(1))] = int(m.group(2))
    for m in re.finditer(r"rank (\d+) \(pid \d+\) died: killed by signal SIG(\w+)", stderr):
        status[int(m.group(1))] = 128 + {"KILL": 9, "SEGV": 11, "ABRT": 6, "BUS": 7}.get(
            m.group(2), 64)
    return status


def landed_phase(case: Case, logs: dict, victims: list, fault_t: float | None) -> str:
    """Where the last kill landed, from the victim's own lines: a kill is
    drawn at a random delay, so it may land after the phase it aimed at."""
    phase = case.name.split("/")[-1]
    victim = victims[-1]
    armed = [float(f["t"]) for e, f in logs[victim] if e == "armed"]
    if not armed:
        return phase + " (never reached)" if case.victims_exit is None else phase
    after = {e for e, f in logs[victim] if "t" in f and float(f["t"]) <= armed[-1]}
    if case.name == "kill/init" and "ready" in after:
        return "init (landed after creation)"
    if case.name in ("kill/agree", "kill/shrink") and "shrunk" in after:
        return phase + " (landed after it)"
    return phase


def run_case(args, case: Case, transport: str, n: int, rng: random.Random) -> dict:
    victims = rng.sample(range(n), min(n, len(case.faults)))
    specs = [f.format(v0=victims[0], v1=victims[-1]) for f in case.faults]
    logdir = pathlib.Path(tempfile.mkdtemp(prefix="chaos_case."))
    env = dict(os.environ, SPCCL_TRANSPORT=transport, SPCCL_TIMEOUT_MS=str(args.timeout_ms))
    if transport == "ucx":
        env.setdefault("UCX_TLS", "tcp")
    argv = [args.spcclrun, "--keep-going", "--timeout", str(args.case_limit), "-n", str(n),
            "/bin/sh", "-c", 'exec "$0" "$@" >"$CHAOS_LOGDIR/rank$SPCCL_RANK.log" 2>&1',
            args.chaos_rank, "--steps", "40", "--count", str(args.count), "--stats-every", "0",
            "--seed", str(rng.randrange(1 << 30))]
    for s in specs:
        argv += ["--fault", s]
    env["CHAOS_LOGDIR"] = str(logdir)
    t0 = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                          timeout=args.case_limit + 30)
    wall = time.monotonic() - t0
    statuses = rank_statuses(proc.stderr, n)
    logs = {r: parse_log(logdir / f"rank{r}.log") if (logdir / f"rank{r}.log").exists() else []
            for r in range(n)}

    problems = []
    if proc.returncode == 124:
        problems.append(f"hung: spcclrun ended the job after {args.case_limit} s")
    # The first fault's moment: a kill's planned instant, or the stop.
    # (an abort's moment is when the victim starts leaving, before its kill)
    fault_t = None
    for e, f in logs[victims[0]]:
        if e in ("armed", "stopping", "leaving"):
            fault_t = float(f["t"]) if fault_t is None else min(fault_t, float(f["t"]))
    phase = landed_phase(case, logs, victims, fault_t)
    detect, recover, outcomes, rcs = [], [], [], set()
    dead = {r for r, s in statuses.items() if s == 137}
    for r in range(n):
        wrong = [f for e, f in logs[r] if e == "WRONG"]
        if wrong:
            problems.append(f"rank {r}: WRONG result ({len(wrong)} calls)")
        s = statuses[r]
        if s >= 128 and s != 137:
            problems.append(f"rank {r}: crashed (status {s})")
        if r in dead and r not in victims:
            problems.append(f"rank {r}: SIGKILLed but it was no victim")
        if r in victims and case.victims_exit is None and s == 0 and any(
                e == "left" for e, _ in logs[r]):
            outcomes.append("victim left (abort returned first)")
            continue
        if r in victims and (s == 137 or case.victims_exit is not None):
            if case.victims_exit is not None:
                first_rc = next((int(f["rc"]) for e, f in logs[r] if e == "fail"), None)
                outcomes.append(f"victim: first rc {RC_NAMES.get(first_rc, first_rc)}, "
                                f"{EXIT_NAMES.get(s, s)}")
                if s not in case.victims_exit:
                    problems.append(f"victim rank {r}: ended with {s}, expected one of "
                                    f"{sorted(case.victims_exit)}")
                if first_rc != 8:
                    problems.append(f"victim rank {r}: first call after resuming returned "
                                    f"{first_rc}, not spcclRevoked (8)")
            continue
        allowed = case.survivor_exits | ({3} if transport in case.late_on else set())
        if s not in allowed:
            problems.append(f"survivor rank {r}: ended with {s} ({EXIT_NAMES.get(s, '?')}), "
                            f"expected one of {sorted(allowed)}")
        outcomes.append(EXIT_NAMES.get(s, str(s)))
        if fault_t is None:
            continue
        fails = [f for e, f in logs[r] if e in ("fail", "init-failed") and float(f["t"]) >= fault_t]
        if fails:
            rcs.add(RC_NAMES.get(int(fails[0]["rc"]), fails[0]["rc"]))
            d = float(fails[0]["t"]) - fault_t
            detect.append(d)
            if d > args.timeout_ms + 1000:
                problems.append(f"rank {r}: detected after {d:.0f} ms > T + 1 s")
        shr = [float(f["t"]) for e, f in logs[r] if e == "shrunk" and float(f["t"]) >= fault_t]
        if shr:
            recover.append(shr[0] - fault_t)
            if shr[0] - fault_t > 3 * args.timeout_ms + 2000:
                problems.append(f"rank {r}: recovered after {shr[0] - fault_t:.0f} ms > 3 T + 2 s")
    if not problems:
        shutil.rmtree(logdir, ignore_errors=True)
    summary = ", ".join(f"{o} x{outcomes.count(o)}" for o in sorted(set(outcomes)))
    return {
        "case": case.name, "transport": transport, "n": n, "phase": phase,
        "faults": " ".join(specs), "outcome": summary, "errors": "/".join(sorted(rcs)) or "-",
        "detect": f"{min(detect):.0f}-{max(detect):.0f}" if detect else "-",
        "recover": f"{min(recover):.0f}-{max(recover):.0f}" if recover else "-",
        "wall": wall, "problems": problems, "logdir": str(logdir),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("spcclrun")
    p.add_argument("chaos_rank")
    p.add_argument("--transports", default="tcp,shm")
    p.add_argument("--sizes", default="3")
    p.add_argument("--cases", default="all")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--timeout-ms", type=int, default=2000)
    p.add_argument("--count", type=int, default=262144)
    p.add_argument("--case-limit", type=int, default=60)
    p.add_argument("--markdown")
    p.add_argument("--only-with-env", metavar="VAR",
                   help="skip (exit 77) unless VAR=1: the big sweep behind an opt-in")
    args = p.parse_args()
    if args.only_with_env and os.environ.get(args.only_with_env) != "1":
        print(f"chaos_matrix: SKIP: set {args.only_with_env}=1 for this sweep")
        return 77
    table = cases(args.timeout_ms)
    names = list(table) if args.cases == "all" else args.cases.split(",")
    for name in names:
        if name not in table:
            sys.exit(f"chaos_matrix: unknown case '{name}' (known: {', '.join(table)})")
    rng = random.Random(args.seed)
    print(f"chaos_matrix: seed {args.seed}, T = {args.timeout_ms} ms", flush=True)
    header = ("| fault / phase | transport | n | faults | survivors' first error | "
              "detection ms | recovery ms | outcome |\n|---|---|---|---|---|---|---|---|")
    rows, failed = [header], 0
    print(header, flush=True)
    for name in names:
        for transport in args.transports.split(","):
            for n in (int(x) for x in args.sizes.split(",")):
                if n < table[name].min_ranks:
                    continue
                for _ in range(args.repeat):
                    r = run_case(args, table[name], transport, n, rng)
                    verdict = "ok" if not r["problems"] else "FAIL: " + "; ".join(r["problems"])
                    row = (f"| {r['case']} ({r['phase']}) | {transport} | {n} | `{r['faults']}` | "
                           f"{r['errors']} | {r['detect']} | {r['recover']} | "
                           f"{r['outcome']}; {verdict} |")
                    print(row + (f"  [{r['wall']:.1f} s" +
                                 (f", logs {r['logdir']}]" if r["problems"] else "]")), flush=True)
                    rows.append(row)
                    failed += bool(r["problems"])
    if args.markdown:
        pathlib.Path(args.markdown).write_text("\n".join(rows) + "\n")
    print(f"chaos_matrix: {len(rows) - 1} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
