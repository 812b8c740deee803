#!/usr/bin/env python3
"""scripts/check-tidy.py's batches, on a tree of five small files made here:
a finding in a batch is reported from the unit's own run (file and line),
a NOLINT in a batch still silences, two files' clashing internal names are
no finding, an unused using-declaration is found although another member
of its batch uses the same name, and the cache skips what passed.

usage: test_check_tidy.py REPO_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HELPER_A = """namespace {
int helper() { return 1; }
}  // namespace
double fromA(int n) { return 1.0 * (n / 2); }  // NOLINT(bugprone-integer-division): planted
int useA() { return helper(); }
"""
# The same internal name as a.cc: a batch of both does not compile.
HELPER_B = "namespace {\nint helper() { return 2; }\n}  // namespace\nint useB() { return helper(); }\n"
FINDING_C = "#include <string>\nint c0();\ndouble half(int n) { return 1.0 * (n / 2); }\n"
FIXED_C = ("#include <string>\nint c0();\n"
           "double half(int n) { return 1.0 * (n / 2); }  // NOLINT(bugprone-integer-division): planted\n")
UNUSED_D = "#include <vector>\nusing std::vector;\nint d() { return 4; }\n"
FIXED_D = "#include <vector>\nint d() { return 4; }\n"
# Uses std::vector through its own using-declaration.
USES_E = "#include <vector>\nusing std::vector;\nint e() { return static_cast<int>(vector<int>(5).size()); }\n"


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def check_tidy(repo, tree):
    env = dict(os.environ, SPCCL_TIDY_ROOT=tree, SPCCL_TIDY_DATABASE=os.path.join(tree, "build"),
               SPCCL_TIDY_CACHE=os.path.join(tree, "cache"), SPCCL_TIDY_BATCH="8",
               SPCCL_TIDY_JOBS="2")
    done = subprocess.run([sys.executable, os.path.join(repo, "scripts", "check-tidy.py")],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                          timeout=300)
    out, err = done.stdout.decode(), done.stderr.decode()
    print(out + err)
    return done.returncode, out, err


def expect(condition, what):
    if not condition:
        sys.exit("FAIL: " + what)


def main():
    repo = os.path.abspath(sys.argv[1])
    if not shutil.which("clang-tidy"):
        print("SKIP: clang-tidy is not installed")
        sys.exit(77)
    tree = tempfile.mkdtemp(prefix="check-tidy-test.")
    try:
        os.makedirs(os.path.join(tree, "src", "fix"))
        os.makedirs(os.path.join(tree, "build"))
        shutil.copy(os.path.join(repo, ".clang-tidy"), tree)
        files = {"a": HELPER_A, "b": HELPER_B, "c": FINDING_C, "d": UNUSED_D, "e": USES_E}
        entries = []
        for name, text in files.items():
            path = os.path.join(tree, "src", "fix", name + ".cc")
            write(path, text)
            entries.append('{"directory": "%s/build", "file": "%s", "arguments": '
                           '["c++", "-std=c++17", "-c", "%s", "-o", "%s.o"]}' %
                           (tree, path, path, name))
        write(os.path.join(tree, "build", "compile_commands.json"), "[%s]" % ",".join(entries))

        rc, out, err = check_tidy(repo, tree)
        expect(rc != 0, "exit status 0 with two planted findings")
        expect(re.search(r"src/fix/c\.cc:3:\d+: error: .*\[bugprone-integer-division", err),
               "c.cc's integer division (line 3) not reported")
        expect(re.search(r"src/fix/d\.cc:2:\d+: error: .*\[misc-unused-using-decls", err),
               "d.cc's unused using-declaration (line 2) not reported, e.cc's use hid it")
        for clean in ("a.cc", "b.cc", "e.cc"):
            expect("fix/" + clean not in err, clean + " reported, but it is clean alone")
        expect("redefinition" not in err, "a batch's clash reported as a finding")
        expect("5 units: 3 checked clean" in out and "2 with findings; 1 batches" in out,
               "summary: " + out)

        write(os.path.join(tree, "src", "fix", "c.cc"), FIXED_C)
        write(os.path.join(tree, "src", "fix", "d.cc"), FIXED_D)
        rc, out, err = check_tidy(repo, tree)
        expect(rc == 0, "exit status %d after the fixes" % rc)
        expect("2 checked clean, 3 unchanged since a clean run" in out,
               "the cache did not skip the three clean units: " + out)
        expect("1 batches, 0 split" in out,
               "c.cc and d.cc (a NOLINT in a batch) not clean as one batch: " + out)
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
