"""docs/perf/sparse.md, "The CPU term": the sparse planner's CPU weights
(src/sparse/planner.cc, "CPU work") fitted to the loopback calls of
docs/perf/sparse_cpu_fit.sh. Per schedule, the time the links-only model
does not explain, in units of one pair of merge work at 3 ns per pair times
the ranks per core (2 cores), against the pairs each step of the schedule
handles; non-negative least squares on the relative error."""
import itertools

from .common import provenance, raw_path, table

FIT = raw_path("sparse_cpu_fit", "sparse_cpu_fit.txt")
M = 16777216
CORES = 2
NS_PER_PAIR = 3e-9


def features(algorithm: str, n: int, local: float, result: float):
    """Pairs per step, as planner.cc counts them (gamma(k) linear in k)."""
    gamma_n = result / local

    def gamma(k: int) -> float:
        return 1 + (gamma_n - 1) * (k - 1) / (n - 1)

    if algorithm == "bp":
        return ["element of M", "local non-zero", "result non-zero"], [M, local, result]
    if algorithm == "hc":
        stages, k = 0.0, 1
        while k < n:
            stages += gamma(k) * local
            k *= 2
        return ["element of M", "pair a stage sends", "result non-zero"], [M, stages, result]
    if algorithm == "agsparse":
        gathered = (n - 1) * local + sum((gamma(q) + 1) * local for q in range(1, n))
        return ["element of M", "pair decoded or merged", "result non-zero"], [M, gathered, result]
    return None, None


def solve(a: list, b: list) -> list:
    """Least squares by the normal equations (a few unknowns)."""
    k = len(a[0])
    ata = [[sum(row[i] * row[j] for row in a) for j in range(k)] for i in range(k)]
    atb = [sum(row[i] * y for row, y in zip(a, b)) for i in range(k)]
    for col in range(k):  # Gauss-Jordan with partial pivoting
        pivot = max(range(col, k), key=lambda r: abs(ata[r][col]))
        ata[col], ata[pivot] = ata[pivot], ata[col]
        atb[col], atb[pivot] = atb[pivot], atb[col]
        if abs(ata[col][col]) < 1e-300:
            return None
        for r in range(k):
            if r != col:
                f = ata[r][col] / ata[col][col]
                ata[r] = [x - f * y for x, y in zip(ata[r], ata[col])]
                atb[r] -= f * atb[col]
    return [atb[i] / ata[i][i] for i in range(k)]


def nnls(a: list, b: list) -> list:
    """Non-negative least squares: the best unconstrained fit over every
    support whose coefficients all come out positive (exact; 2^k tries)."""
    k = len(a[0])
    best, best_residual = [0.0] * k, sum(y * y for y in b)
    for size in range(1, k + 1):
        for support in itertools.combinations(range(k), size):
            x = solve([[row[i] for i in support] for row in a], b)
            if x is None or min(x) <= 0:
                continue
            full = [0.0] * k
            for i, v in zip(support, x):
                full[i] = v
            residual = sum((sum(w * f for w, f in zip(full, row)) - y) ** 2 for row, y in zip(a, b))
            if residual < best_residual:
                best, best_residual = full, residual
    return best


def fit() -> dict:
    """{algorithm: (names, weights, [(n, density, measured_s, fitted_s)])}."""
    cases = {}
    for line in open(FIT):
        fields = line.split()
        if len(fields) != 7:
            continue
        n, density, algorithm, measured, wire, output_nnz, nnz = fields
        n, measured, wire = int(n), float(measured) * 1e-6, float(wire) * 1e-6
        names, f = features(algorithm, n, int(nnz) / n, int(output_nnz))
        if f is None:
            continue
        pair_seconds = NS_PER_PAIR * max(1.0, n / CORES)
        cases.setdefault(algorithm, []).append((names, f, (measured - wire) / pair_seconds, n,
                                                float(density), measured, wire, pair_seconds))
    out = {}
    for algorithm, rows in cases.items():
        # Relative error: each row scaled by the work it has to explain.
        weights = nnls([[x / work for x in f] for _, f, work, *_ in rows], [1.0] * len(rows))
        points = [(n, d, measured, wire + sum(w * x for w, x in zip(weights, f)) * pair_seconds)
                  for _, f, _, n, d, measured, wire, pair_seconds in rows]
        out[algorithm] = (rows[0][0], weights, points)
    return out


def fit_table() -> str:
    out = []
    for algorithm, (names, weights, points) in fit().items():
        terms = " + ".join(f"{w:.3g} per {name}" for w, name in zip(weights, names) if w > 0)
        ratios = [measured / fitted for _, _, measured, fitted in points]
        worst = max(points, key=lambda p: abs(p[2] / p[3] - 1))
        out.append([algorithm, terms, f"{min(ratios):.2f}–{max(ratios):.2f}",
                    f"n = {worst[0]}, d = {worst[1] * 100:g} %"])
    header = ["schedule", "fitted work pairs per call", "measured / fit", "worst point"]
    return table(header, out) + "\n\n" + provenance(FIT)


TABLES = [("sparse.md", "sparse-cpu-fit", fit_table, [FIT])]
PLOTS = []
