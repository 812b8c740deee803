#!/usr/bin/env python3
"""Fails when clang-tidy (the checks of .clang-tidy) finds something in the
project's own C++: src/, transports/, interpose/, kernels/cpu/, tools/,
perf/ (not tests/, bindings/, examples/, nor CUDA .cu files).

  check-tidy.py [FILE...]   every translation unit, or only those given

Two things keep the time bounded.

Batches. Most of clang-tidy's time on a unit goes to parsing and matching
the standard library's headers, the same in every unit: src/core/comm.cc
takes 2.1 s with no check enabled and 6.2 s with ours. So units that share
a folder and a compile command are checked several at a time (at most one
that defines main), as one translation unit made of their text, each
file's part starting with `#line 1 "FILE"` (NOLINT comments work as in the
file) and the file's folder first on the quoted-include path. The
project's 270 units: 484 s one at a time, 193 s in batches (-j2, idle
2-core VM, clang-tidy 14).

A batch with any diagnostic (a clash of two files' internal names
included) is split in two and each half checked again, down to single
units, and only a single unit's run is reported: a finding is always that
of the unit alone. Two checks count a use anywhere in the translation
unit (misc-unused-using-decls and -alias-decls), where a batch could hide
a finding: a unit that declares a namespace-scope using-declaration or
alias is also checked alone for those two.

A cache of clean results. A unit that passed is recorded under
$SPCCL_TIDY_CACHE (default ~/.cache/spccl-tidy) by the sha256 of:
clang-tidy's version, .clang-tidy, the options below, its compile command
and its preprocessed text with comments kept (c++ -E -C: the file and
every header it includes, NOLINTs included). A unit whose key is there is
skipped, at about 0.3 s of preprocessing. .ci/run passes an empty
SPCCL_TIDY_CACHE, as a fresh machine has none (and keying would be
preprocessing for nothing).

Environment:
  SPCCL_TIDY_CACHE  the cache folder (an empty value: no cache)
  SPCCL_TIDY_JOBS   parallel clang-tidy processes (default 2)
  SPCCL_TIDY_BATCH  most units in one batch (default 8; 1: one at a time)
  SPCCL_TIDY_BUILD  the build folder for the compile commands (default
                    build-tidy; configured here, nothing is built)
  SPCCL_TIDY_DATABASE  a folder with a compile_commands.json to use as it
                    is, with no configure (the tool's own test)
  SPCCL_TIDY_ROOT   the source tree (default: this checkout)
"""
import concurrent.futures
import hashlib
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

FOLDERS = ("src/", "transports/", "interpose/", "kernels/cpu/", "tools/", "perf/")
HEADER_FOLDERS = "src|include|transports|interpose|kernels/cpu|tools|perf"
# A program's entry point: two in one batch clash.
MAIN = re.compile(r"^\s*(int\s+main\s*\(|BENCHMARK_MAIN\b)", re.MULTILINE)
# A using-declaration or namespace alias at namespace scope (where
# UNUSED_NAME_CHECKS look; the project's style does not indent them).
NAMESPACE_SCOPE_NAME = re.compile(r"^(using\s+[\w:]+\s*;|namespace\s+\w+\s*=)", re.MULTILINE)
UNUSED_NAME_CHECKS = "--checks=-*,misc-unused-using-decls,misc-unused-alias-decls"
WARNINGS_LINE = re.compile(r"^\d+ warnings? (and \d+ errors? )?generated\.$")


class Unit:
    """One translation unit: its file, folder and compile command."""

    def __init__(self, path, directory, arguments):
        self.path = path
        self.directory = directory
        self.arguments = arguments  # the compiler's argv, source and -o included
        self.key = ""               # the cache key, when there is a cache

    def without_output(self):
        """The compile command less its `-o FILE`."""
        arguments = []
        skip = False
        for arg in self.arguments:
            if skip:
                skip = False
            elif arg == "-o":
                skip = True
            else:
                arguments.append(arg)
        return arguments

    def group(self):
        """Units with equal groups may share a batch."""
        rest = tuple(arg for arg in self.without_output() if arg != self.path)
        return (os.path.dirname(self.path), self.directory, rest)

    def preprocess_command(self):
        """The compile command with -E -C for -c and no -o."""
        command = []
        for arg in self.without_output():
            command += ["-E", "-C"] if arg == "-c" else [arg]
        return command


def run(command, cwd=None):
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          check=False)
    return done.returncode, done.stdout.decode(errors="replace")


def load_units(database, root, only):
    with open(os.path.join(database, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    units, seen = [], set()
    for entry in entries:
        path = entry["file"]
        relative = os.path.relpath(path, root)
        if path in seen or not relative.startswith(FOLDERS) or path.endswith(".cu"):
            continue
        if only and path not in only:
            continue
        seen.add(path)
        arguments = entry.get("arguments") or shlex.split(entry["command"])
        units.append(Unit(path, entry["directory"], arguments))
    return units


def cache_key(unit, stamp):
    command = unit.preprocess_command()
    _, text = run(command, cwd=unit.directory)
    digest = hashlib.sha256()
    for part in (stamp, shlex.join(command), text):
        digest.update(part.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def source_matches(unit, pattern):
    with open(unit.path, encoding="utf-8") as source:
        return pattern.search(source.read()) is not None


def make_batches(units, size):
    """Units of one group, in path order, cut into near-equal batches of at
    most `size` and at most one `main` (perf/ holds a program per file);
    the largest batches first, so that the last to finish are small ones."""
    groups = {}
    for unit in sorted(units, key=lambda u: u.path):
        groups.setdefault(unit.group(), []).append(unit)
    batches = []
    for members in groups.values():
        mains = [u for u in members if source_matches(u, MAIN)]
        count = max(len(mains), -(-len(members) // size))
        group_batches = [[u] for u in mains] + [[] for _ in range(count - len(mains))]
        for unit in members:
            if unit not in mains:
                min(group_batches, key=len).append(unit)
        batches += group_batches
    batches.sort(key=len, reverse=True)
    return batches


def write_batch(batch, folder):
    """The batch's text in `folder`, with a compile_commands.json naming it
    with the first member's command: the batch file for the source, the
    members' folder first among the quoted-include folders."""
    first = batch[0]
    path = os.path.join(folder, "batch" + os.path.splitext(first.path)[1])
    with open(path, "w", encoding="utf-8") as out:
        for unit in batch:
            with open(unit.path, encoding="utf-8") as source:
                text = source.read()
            out.write('#line 1 "%s"\n' % unit.path)
            out.write(text if text.endswith("\n") else text + "\n")
    arguments = [path if arg == first.path else arg for arg in first.arguments]
    arguments[1:1] = ["-iquote", os.path.dirname(first.path)]
    with open(os.path.join(folder, "compile_commands.json"), "w", encoding="utf-8") as out:
        json.dump([{"directory": first.directory, "file": path, "arguments": arguments}], out)
    return path


def main():
    root = os.path.abspath(os.environ.get("SPCCL_TIDY_ROOT") or
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    os.chdir(root)
    if not shutil.which("clang-tidy"):
        sys.exit("check-tidy: clang-tidy is not installed")
    jobs = int(os.environ.get("SPCCL_TIDY_JOBS") or 2)
    batch_size = max(1, int(os.environ.get("SPCCL_TIDY_BATCH") or 8))
    cache = os.environ.get("SPCCL_TIDY_CACHE",
                           os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                        os.path.expanduser("~/.cache"), "spccl-tidy"))
    start = time.monotonic()

    database = os.environ.get("SPCCL_TIDY_DATABASE")
    if not database:
        database = os.environ.get("SPCCL_TIDY_BUILD") or "build-tidy"
        rc, log = run(["cmake", "-S", ".", "-B", database, "-G", "Ninja",
                       "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"])
        if rc != 0:
            sys.exit(log + "check-tidy: configuring %s failed" % database)
    database = os.path.abspath(database)
    batches_folder = os.path.join(database, "tidy-batches")
    shutil.rmtree(batches_folder, ignore_errors=True)
    os.makedirs(batches_folder)

    # The compile commands are GCC's -Wall -Wextra -Werror: clang's own
    # warnings, GCC-only options among them, are not errors here (GCC's
    # build checks the warnings; this checks .clang-tidy's checks). The
    # config is named, as a batch file's folder may have no .clang-tidy.
    options = ["--quiet", "--config-file=%s/.clang-tidy" % root,
               "--extra-arg=-Wno-unknown-warning-option", "--extra-arg=-Wno-error",
               "--header-filter=^%s/(%s)/" % (re.escape(root), HEADER_FOLDERS)]
    _, version = run(["clang-tidy", "--version"])
    with open(".clang-tidy", encoding="utf-8") as f:
        stamp = hashlib.sha256("\n".join([version, f.read()] + options).encode()).hexdigest()

    only = {os.path.abspath(f) for f in sys.argv[1:]}
    units = load_units(database, root, only)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    cached = 0
    if cache:
        os.makedirs(cache, exist_ok=True)
        for unit, key in zip(units, pool.map(lambda u: cache_key(u, stamp), units)):
            unit.key = key
        fresh = [u for u in units if not os.path.exists(os.path.join(cache, u.key))]
        for unit in units:
            if unit not in fresh:
                os.utime(os.path.join(cache, unit.key))
        cached = len(units) - len(fresh)
    else:
        fresh = units

    batches = make_batches(fresh, batch_size)
    folders = itertools.count()  # next() is atomic under the GIL: a name per batch

    def findings_of(unit, checks=()):
        """[(unit, its findings)] of clang-tidy on the unit alone."""
        rc, log = run(["clang-tidy", "-p", database] + options + list(checks) + [unit.path])
        if rc == 0:
            return []
        return [(unit, "\n".join(l for l in log.splitlines() if not WARNINGS_LINE.match(l)))]

    def tidy_units(batch):
        """(findings per unit that has any, batches checked again in halves).
        A batch with a diagnostic is split in two until each part is clean
        or a single unit, whose own run is the one reported."""
        if len(batch) == 1:
            return findings_of(batch[0]), 0
        folder = os.path.join(batches_folder, str(next(folders)))
        os.makedirs(folder)
        rc, _ = run(["clang-tidy", "-p", folder] + options + [write_batch(batch, folder)])
        if rc == 0:
            return [], 0
        half = len(batch) // 2
        first, split_first = tidy_units(batch[:half])
        second, split_second = tidy_units(batch[half:])
        return first + second, 1 + split_first + split_second

    def tidy_names_alone(unit):
        return findings_of(unit, [UNUSED_NAME_CHECKS]), 0

    # misc-unused-using-decls and -alias-decls count a use anywhere in the
    # translation unit: in a batch, another member's use of the same name
    # would hide an unused one. A batched unit that declares such names is
    # checked for them alone too (about 2 s: the parse).
    work = [(tidy_units, b) for b in batches]
    work += [(tidy_names_alone, u) for b in batches if len(b) > 1 for u in b
             if source_matches(u, NAMESPACE_SCOPE_NAME)]
    findings, split = [], 0
    jobs_done = pool.map(lambda job: job[0](job[1]), work)
    for found, halves in jobs_done:
        findings += found
        split += halves
    pool.shutdown()
    failed = {unit.path for unit, _ in findings}
    for _, log in sorted(findings, key=lambda f: f[0].path):
        print(log, file=sys.stderr)
    if cache:
        for unit in fresh:
            if unit.path not in failed:
                open(os.path.join(cache, unit.key), "w", encoding="utf-8").close()
    shutil.rmtree(batches_folder, ignore_errors=True)
    if cache:  # records older than 60 days belong to code long gone
        old = time.time() - 60 * 86400
        for name in os.listdir(cache):
            if os.path.getmtime(os.path.join(cache, name)) < old:
                os.remove(os.path.join(cache, name))

    print("check-tidy: %d units: %d checked clean, %d unchanged since a clean run (cache %s), "
          "%d with findings; %d batches, %d split in two after a diagnostic; %.0f s (%s)" %
          (len(units), len(fresh) - len(failed), cached, cache or "off", len(failed),
           len(batches), split, time.monotonic() - start,
           re.search(r"version [0-9.]+", version).group(0)))
    if failed:
        sys.exit("check-tidy: fix the findings above, or silence a false one with "
                 "// NOLINT(check): reason")


if __name__ == "__main__":
    main()
