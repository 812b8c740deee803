"""docs/perf/compression.md: the codecs' error (perf/codec_error's output)
and two-shot against ring as n grows (compressed_all_reduce_perf's rows)."""
from .common import provenance, raw_path, sig3, table

CODEC_ERROR = raw_path("codec_error", "codec_error.txt")
SCHEDULES = raw_path("compression_schedules", "schedules.txt")


def codec_error_rows() -> dict:
    """{(distribution, scale, codec, bits): MSE/var text} from the per-case rows."""
    rows, distribution = {}, None
    for line in open(CODEC_ERROR):
        if line.startswith("## "):
            distribution = line[3:].split(":")[0]
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and (cells[0] == "tensor" or cells[0].startswith("block ")):
            rows[(distribution, cells[0], cells[1], int(cells[2]))] = cells[4]
    return rows


def summary_rows(distribution: str) -> list:
    """The binary's own summary table of a distribution ("gaussian, MSE/var
    ..."): bits, then MSE/var and lin/pw per scale, unrounded ratios."""
    rows, inside = [], False
    for line in open(CODEC_ERROR):
        if line.startswith(f"{distribution}, MSE/var"):
            inside = True
        elif inside and line.startswith("| ") and not line.startswith("| bits"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif inside and rows and not line.startswith("|"):
            break
    return rows


def codec_error_table(distribution: str) -> str:
    out = []
    for cells in summary_rows(distribution):
        # Bold where piecewise wins by 10 % or more.
        out.append([c if i not in (3, 6) or float(c) < 1.1 else f"**{c}**" for i, c in enumerate(cells)])
    block = next(scale for (d, scale, _, _) in codec_error_rows() if d == distribution and scale != "tensor")
    b = block.split()[1]
    header = ["bits", f"piecewise B={b}", f"linear B={b}", "lin/pw", "piecewise tensor", "linear tensor",
              "lin/pw"]
    return table(header, out) + "\n\n" + provenance(CODEC_ERROR)


def schedule_rows() -> dict:
    """{(codec, bits, schedule, n): (max_err, rmse, rel_err, wrong)}."""
    rows = {}
    for line in open(SCHEDULES):
        if line.startswith("#") or "|" not in line:
            continue
        parts = [p.split() for p in line.split("|")]
        codec, bits, schedule, n = parts[0]
        max_err, rmse, rel_err, wrong = parts[5]
        rows[(codec, int(bits), schedule, int(n))] = (float(max_err), float(rmse), float(rel_err),
                                                      int(wrong))
    return rows


def schedules_piecewise4() -> str:
    rows = schedule_rows()
    ns = sorted(n for (c, b, s, n) in rows if (c, b, s) == ("piecewise", 4, "two-shot"))
    out = []
    for n in ns:
        two, ring = rows[("piecewise", 4, "two-shot", n)], rows[("piecewise", 4, "ring", n)]
        out.append([n] + [sig3(v) for v in two[:3]] + [sig3(v) for v in ring[:3]]
                   + [f"{ring[2] / two[2]:.2f}"])
    header = ["n", "two-shot max_err", "two-shot rmse", "two-shot rel_err", "ring max_err", "ring rmse",
              "ring rel_err", "ring / two-shot rel_err"]
    return table(header, out) + "\n\n" + provenance(SCHEDULES)


def schedules_others() -> str:
    rows = schedule_rows()
    ns = sorted(n for (c, b, s, n) in rows if (c, b, s) == ("piecewise", 8, "two-shot"))
    configs = [("piecewise", 8), ("linear", 4), ("linear", 8)]
    out = [[n] + [f"{sig3(rows[(c, b, 'two-shot', n)][2])} / {sig3(rows[(c, b, 'ring', n)][2])}"
                  for c, b in configs] for n in ns]
    wrong = sum(r[3] for r in rows.values())
    header = ["n"] + [f"{c} {b}-bit" for c, b in configs]
    return (table(header, out) + f"\n\nElements beyond the bound over all {len(rows)} runs: {wrong}.\n\n"
            + provenance(SCHEDULES))


TABLES = [
    ("compression.md", "codec-error-gaussian", lambda: codec_error_table("gaussian"), [CODEC_ERROR]),
    ("compression.md", "codec-error-student-t3", lambda: codec_error_table("student-t3"), [CODEC_ERROR]),
    ("compression.md", "codec-error-laplace", lambda: codec_error_table("laplace"), [CODEC_ERROR]),
    ("compression.md", "schedules-piecewise4", schedules_piecewise4, [SCHEDULES]),
    ("compression.md", "schedules-other-codecs", schedules_others, [SCHEDULES]),
]
PLOTS = []
