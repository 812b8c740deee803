"""Fits the sparse planner's CPU weights (planner.cc, "CPU work") to
sparse_cpu_fit.txt (sparse_cpu_fit.sh): per schedule, the time the links do
not explain, in units of one pair of merge work at 3 ns per pair times the
ranks per core (2 cores here), against the pairs each step of the schedule
handles. Non-negative least squares on the relative error. Needs numpy and
scipy.  /usr/bin/python3 docs/perf/fit_sparse_cpu.py"""
import os
import numpy as np
from scipy.optimize import nnls

HERE = os.path.dirname(os.path.abspath(__file__))
M = 16777216
CORES = 2
NS_PER_PAIR = 3e-9


def features(algorithm, n, local, result):
    """Pairs per step, as planner.cc counts them (gamma(k) linear in k)."""
    gamma_n = result / local
    gamma = lambda k: 1 + (gamma_n - 1) * (k - 1) / (n - 1)
    if algorithm == "bp":
        return ["M", "local", "result"], [M, local, result]
    if algorithm == "hc":
        stages, k = 0.0, 1
        while k < n:
            stages += gamma(k) * local
            k *= 2
        return ["M", "stage pairs", "result"], [M, stages, result]
    if algorithm == "agsparse":
        gathered = (n - 1) * local + sum((gamma(q) + 1) * local for q in range(1, n))
        return ["M", "gathered", "result"], [M, gathered, result]
    return None, None


rows = [line.split() for line in open(os.path.join(HERE, "sparse_cpu_fit.txt")) if len(line.split()) == 7]
by_algorithm = {}
for n, density, algorithm, measured, wire, output_nnz, nnz in rows:
    n, measured, wire = int(n), float(measured) * 1e-6, float(wire) * 1e-6
    names, f = features(algorithm, n, int(nnz) / n, int(output_nnz))
    if f is None:
        continue
    pair_seconds = NS_PER_PAIR * max(1.0, n / CORES)
    by_algorithm.setdefault(algorithm, []).append((names, f, (measured - wire) / pair_seconds,
                                                   n, float(density), measured, wire, pair_seconds))
for algorithm, cases in by_algorithm.items():
    a = np.array([np.array(f) / work for _, f, work, *_ in cases])
    weights, _ = nnls(a, np.ones(len(cases)))
    names = cases[0][0]
    print(algorithm + ": " + ", ".join(f"{w:.2f} per {name}" for w, name in zip(weights, names)))
    for _, f, _, n, density, measured, wire, pair_seconds in cases:
        fitted = wire + np.dot(f, weights) * pair_seconds
        print(f"  n={n} d={density:<6} measured {measured:7.3f} s  fit {fitted:7.3f} s  "
              f"measured/fit {measured / fitted:.2f}")
