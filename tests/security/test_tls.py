#!/usr/bin/env python3
"""SPCCL_TLS over real processes and real sockets (docs/security.md,
"Encryption in transit"). Each rank is its own process (tls_check: init,
a checked f32 sum all-reduce, a uint8 max all-reduce of a marker text),
over the tcp transport on loopback.

  psk        n = 2 and 3 with SPCCL_TLS=psk: every rank's results verified
  wire       strace dumps every byte the ranks write (as secret_on_wire):
             with SPCCL_TLS=off the marker is there (so the check can
             fail), with psk it is not
  secret     a rank with another secret fails at once naming the root, the
             others within SPCCL_TIMEOUT_MS; no rank hangs
  cert       SPCCL_TLS=cert with certificates made here by the openssl CLI
             (nothing private is committed): valid; a certificate for
             another host (refused, naming the peer rank); a certificate
             from an untrusted CA (refused)
  bad        SPCCL_TLS=bogus is refused naming the variable, as are ranks
             whose modes differ and cert mode without its files

usage: test_tls.py TLS_CHECK [case ...]
"""
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time

MARKER = b"spccl-tls-cleartext-marker:"
TIMEOUT_MS = 8000
DUMP = re.compile(r"^ \| [0-9a-f]{5}  ((?:[0-9a-f]{2} {1,2}){1,16})")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(program, n, env_of_rank, wrap=None):
    """Runs n ranks; returns [(rc, stdout, stderr)] and the wall time."""
    port = free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith("SPCCL_")}
    base.update(SPCCL_NRANKS=str(n), SPCCL_COMM_ID=f"127.0.0.1:{port}", SPCCL_TRANSPORT="tcp",
                SPCCL_SOCKET_IFNAME="lo", SPCCL_TIMEOUT_MS=str(TIMEOUT_MS),
                SPCCL_JOB_SECRET=JOB_SECRET)
    procs = []
    start = time.monotonic()
    for rank in range(n):
        env = dict(base, SPCCL_RANK=str(rank), SPCCL_LOCAL_RANK=str(rank))
        env.update(env_of_rank(rank))
        cmd = (wrap(rank) if wrap else []) + [program]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=TIMEOUT_MS / 1000 * 4 + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            err += "\n<killed: hung>"
        results.append((p.returncode, out, err))
    return results, time.monotonic() - start


def show(results):
    return "\n".join(f"--- rank {r}: rc {rc}\n{out}{err[-2000:]}"
                     for r, (rc, out, err) in enumerate(results))


def expect_ok(name, results):
    if any(rc != 0 or "OK" not in out for rc, out, _ in results):
        sys.exit(f"test_tls {name}: a rank failed\n{show(results)}")
    print(f"test_tls {name}: OK ({len(results)} ranks)")


def expect_fail(name, results, elapsed, patterns):
    if any(rc == 0 for rc, _, _ in results):
        sys.exit(f"test_tls {name}: a rank succeeded\n{show(results)}")
    if any("<killed: hung>" in err for _, _, err in results):
        sys.exit(f"test_tls {name}: a rank hung\n{show(results)}")
    text = "\n".join(err for _, _, err in results)
    for pattern in patterns:
        if not re.search(pattern, text):
            sys.exit(f"test_tls {name}: no error matches /{pattern}/\n{show(results)}")
    limit = TIMEOUT_MS / 1000 * 2 + 10
    if elapsed > limit:
        sys.exit(f"test_tls {name}: took {elapsed:.1f} s (> {limit:.0f} s)\n{show(results)}")
    print(f"test_tls {name}: OK, refused in {elapsed:.1f} s")
    for r, (_, _, err) in enumerate(results):
        last = [l for l in err.splitlines() if l.strip()][-1:] or ["(nothing)"]
        print(f"  rank {r}: {last[0][:300]}")


def case_psk(program):
    for n in (2, 3):
        expect_ok(f"psk n={n}", launch(program, n, lambda r: {"SPCCL_TLS": "psk"})[0])


def written_bytes(log_path):
    out = bytearray()
    with open(log_path, errors="replace") as f:
        for line in f:
            m = DUMP.match(line)
            if m:
                out += bytes.fromhex(m.group(1).replace(" ", ""))
    return bytes(out)


def case_wire(program):
    if shutil.which("strace") is None:
        print("test_tls wire: SKIP: strace not found")
        return
    with tempfile.TemporaryDirectory() as tmp:
        found = {}
        for mode in ("off", "psk"):
            logs = [os.path.join(tmp, f"{mode}.{r}.log") for r in range(2)]
            wrap = lambda r: ["strace", "-f", "-qq", "-e",  # noqa: E731
                              "trace=write,writev,send,sendto,sendmsg", "-e", "write=all",
                              "-o", logs[r]]
            results, _ = launch(program, 2, lambda r: {"SPCCL_TLS": mode}, wrap)
            expect_ok(f"wire {mode}", results)
            blob = b"".join(written_bytes(log) for log in logs)
            if len(blob) < 1 << 20:
                sys.exit(f"test_tls wire {mode}: only {len(blob)} bytes dumped")
            found[mode] = blob.count(MARKER)
            print(f"test_tls wire {mode}: {len(blob)} bytes written, marker seen "
                  f"{found[mode]} times")
        if found["off"] == 0:
            sys.exit("test_tls wire: the marker is not in the clear traffic: the check is broken")
        if found["psk"] != 0:
            sys.exit("test_tls wire: the marker went out in the clear with SPCCL_TLS=psk")


def case_secret(program):
    other = secrets.token_hex(32)
    results, elapsed = launch(program, 2, lambda r: dict(
        SPCCL_TLS="psk", **({"SPCCL_JOB_SECRET": other} if r == 1 else {})))
    # The communicator id comes from the secret, so the root already refuses
    # the hello; a rank with the same id but another secret would fail its
    # challenge ("failed authentication", tests/unit/test_handshake.cc).
    expect_fail("wrong secret", results, elapsed,
                [r"rendezvous root \S+ (closed every connection|failed authentication|closed the "
                 r"connection)",
                 r"only 1 of 2 ranks arrived|timed out"])


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_cert(tmp, ca, name, sans):
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=tmp)
    with open(os.path.join(tmp, f"{name}.ext"), "w") as f:
        f.write(f"subjectAltName={sans}\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-days", "1", "-extfile", f"{name}.ext", "-out", f"{name}.pem",
            cwd=tmp)


def make_ca(tmp, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "1",
            "-subj", f"/CN={name}", cwd=tmp)


def case_cert(program):
    if shutil.which("openssl") is None:
        print("test_tls cert: SKIP: openssl CLI not found")
        return
    host = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp:
        make_ca(tmp, "ca")
        make_ca(tmp, "rogue-ca")
        make_cert(tmp, "ca", "host", f"DNS:{host},IP:127.0.0.1")
        make_cert(tmp, "ca", "wronghost", "DNS:wrong.example")
        make_cert(tmp, "rogue-ca", "untrusted", f"DNS:{host},IP:127.0.0.1")

        def cert_env(name_of_rank):
            return lambda r: dict(SPCCL_TLS="cert", SPCCL_TLS_CA=f"{tmp}/ca.pem",
                                  SPCCL_TLS_CERT=f"{tmp}/{name_of_rank(r)}.pem",
                                  SPCCL_TLS_KEY=f"{tmp}/{name_of_rank(r)}.key")

        expect_ok("cert valid n=3", launch(program, 3, cert_env(lambda r: "host"))[0])
        results, elapsed = launch(program, 2, cert_env(lambda r: "wronghost" if r == 1 else "host"))
        expect_fail("cert wrong host", results, elapsed,
                    [r"rank 1 .*names neither|certificate of rank 1.*names neither"])
        results, elapsed = launch(program, 2, cert_env(lambda r: "untrusted" if r == 1 else "host"))
        expect_fail("cert untrusted CA", results, elapsed,
                    [r"certificate verify failed|unknown ca"])


def case_bad(program):
    results, elapsed = launch(program, 2, lambda r: {"SPCCL_TLS": "bogus"})
    expect_fail("bad value", results, elapsed, [r"SPCCL_TLS=bogus"])
    results, elapsed = launch(program, 2, lambda r: {"SPCCL_TLS": "off" if r == 1 else "psk"})
    expect_fail("mixed modes", results, elapsed, [r"SPCCL_TLS is \w+ on rank \d but \w+ on rank"])
    results, elapsed = launch(program, 2, lambda r: {"SPCCL_TLS": "cert"})
    expect_fail("cert without files", results, elapsed, [r"SPCCL_TLS=cert needs SPCCL_TLS_CA"])


CASES = {"psk": case_psk, "wire": case_wire, "secret": case_secret, "cert": case_cert,
         "bad": case_bad}
JOB_SECRET = secrets.token_hex(32)


def main():
    program = sys.argv[1]
    for name in sys.argv[2:] or list(CASES):
        CASES[name](program)


if __name__ == "__main__":
    main()
