#!/usr/bin/env python3
"""The job secret never leaves a process: a 2-rank job over tcp (rendezvous,
lanes, link profiling, one all-reduce) runs under strace, which dumps every
byte written by write, writev, send, sendto and sendmsg; neither the raw
secret nor its hex (either case) may appear in them. A control run that does
print the secret proves the dump parser finds it.

usage: test_secret_on_wire.py SPCCLRUN PROGRAM
"""
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile

DUMP = re.compile(r"^ \| [0-9a-f]{5}  ((?:[0-9a-f]{2} {1,2}){1,16})")


def written_bytes(log_path):
    """Every dumped byte, in order, each syscall's data concatenated."""
    out = bytearray()
    with open(log_path, errors="replace") as f:
        for line in f:
            m = DUMP.match(line)
            if m:
                out += bytes.fromhex(m.group(1).replace(" ", ""))
    return bytes(out)


def traced(cmd, env):
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "strace.log")
        run = subprocess.run(["strace", "-f", "-qq", "-e", "trace=write,writev,send,sendto,sendmsg",
                              "-e", "write=all", "-o", log] + cmd, env=env,
                             capture_output=True, text=True, timeout=240)
        if run.returncode != 0:
            sys.exit(f"secret_on_wire: {cmd} exited {run.returncode}:\n{run.stderr[-3000:]}")
        return written_bytes(log)


def found(blob, secret):
    return [what for what, needle in (("raw", secret), ("hex", secret.hex().encode()),
                                      ("HEX", secret.hex().upper().encode())) if needle in blob]


def main():
    if shutil.which("strace") is None:
        print("secret_on_wire: SKIP: strace not found")
        sys.exit(77)
    spcclrun, program = sys.argv[1], sys.argv[2]
    secret = secrets.token_bytes(32)
    env = {k: v for k, v in os.environ.items() if k not in ("SPCCL_JOB_SECRET_FILE", "SPCCL_AUTH")}
    env.update(SPCCL_JOB_SECRET=secret.hex(), SPCCL_TRANSPORT="tcp")
    # Control: the parser sees a secret that is written.
    control = traced(["sh", "-c", 'printf "%s\\n" "$SPCCL_JOB_SECRET"'], env)
    if "hex" not in found(control, secret):
        sys.exit("secret_on_wire: the control run's secret was not found: the dump parser is broken")
    blob = traced([spcclrun, "-n", "2", "--", program], env)
    if len(blob) < 1 << 20:
        sys.exit(f"secret_on_wire: only {len(blob)} bytes dumped; expected the job's traffic")
    leaks = found(blob, secret)
    if leaks:
        sys.exit(f"secret_on_wire: the secret was written ({', '.join(leaks)})")
    print(f"secret_on_wire: OK, {len(blob)} bytes written by the job, no trace of the secret")


if __name__ == "__main__":
    main()
