#!/usr/bin/env python3
"""The reduce tables of doc/benchmarks.md from scripts/bench-floor.sh's and
scripts/bench-dropin.sh's CSV files:

    scripts/reduce-tables.py sparse [DIR]   p2_sparse.csv, p4.csv, p8.csv, huge.txt
    scripts/reduce-tables.py dropin [DIR]   p2_dropin.csv
                                            (DIR: default doc/results/reduce)

Times: per row and density, the median over the rounds of each process's
median of 30 calls (the slowest rank's time per call). Ratios: the median
over the rounds of the two rows' ratio in the same round.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

kind = sys.argv[1] if len(sys.argv) > 1 else "sparse"
d = sys.argv[2] if len(sys.argv) > 2 else "doc/results/reduce"
DENSITIES = (0.001, 0.01, 0.1, 1)


def nearest(x):
    return min(DENSITIES, key=lambda y: abs(float(x) - y) / y)


def rounds(path):
    """(row, density) -> the medians of its processes, in round order (us)."""
    t = defaultdict(list)
    for r in csv.reader(open(path)):
        if not r or r[0] == "algorithm":
            continue
        if r[17] != "ok":
            sys.exit(f"{path}: {r[0]} at density {r[4]} differs from MPI_Reduce")
        t[(r[0], nearest(r[4]))].append(float(r[10]))
    return t


def ms(us):
    x = us / 1000
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def ratio(t, a, b, dens):
    """Median over rounds of a / b; b a tuple: the fastest of those rows in the round."""
    x = t[(a, dens)]
    ys = [t[(n, dens)] for n in (b if isinstance(b, tuple) else (b,))]
    n = min([len(x)] + [len(y) for y in ys])
    return statistics.median(x[i] / min(y[i] for y in ys) for i in range(n)) if n else float("nan")


def fmt_ratio(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}" if x >= 10 else f"{x:.2f}"


def table(t, cols, ratios):
    print("| density | " + " | ".join(c[1] for c in cols) + " | " + " | ".join(r[2] for r in ratios) + " |")
    print("|---" * (1 + len(cols) + len(ratios)) + "|")
    for de in DENSITIES:
        cells = [ms(statistics.median(t[(c[0], de)])) if t[(c[0], de)] else "" for c in cols]
        rs = [fmt_ratio(ratio(t, a, b, de)) for a, b, _ in ratios]
        print(f"| {de * 100:g} % | " + " | ".join(cells) + " | " + " | ".join(rs) + " |")
    n = max(len(v) for v in t.values())
    print(f"\n(ms, medians of {n} rounds)")


if kind == "sparse":
    t = rounds(os.path.join(d, "p2_sparse.csv"))
    oneshot = "oneshot automatic [Eigen]"
    table(t,
          [("mpi_reduce", "MPI_Reduce (dense)"), ("boost_serialized", "Boost.MPI"),
           ("gatherv_merge", "Gatherv + merge"), ("floor", "floor"),
           (oneshot, "reduce, one-shot [Eigen]"), ("automatic [index_value_vector]", "plan [index_value_vector]")],
          [(oneshot, "floor", "one-shot × floor"), ("boost_serialized", oneshot, "faster than Boost.MPI"),
           ("mpi_reduce", oneshot, "faster than MPI_Reduce")])
    for p in (4, 8):
        path = os.path.join(d, f"p{p}.csv")
        if not os.path.exists(path):
            continue
        rows = list(csv.DictReader(open(path)))
        print(f"\nP = {p}, 2^21 doubles, root {p - 1}: MB sent (all ranks) / messages\n")
        names = [("mpi_reduce", "MPI_Reduce"), ("gatherv_merge", "Gatherv + merge"), ("floor", "floor"),
                 (oneshot, "reduce, one-shot [Eigen]"), ("automatic [index_value_vector]", "plan [index_value_vector]")]
        print("| density | " + " | ".join(n[1] for n in names) + " |")
        print("|---" * (len(names) + 1) + "|")
        for de in (0.001, 0.01, 0.1):
            got = {r["algorithm"]: r for r in rows if nearest(r["density"]) == de}
            bad = [r["algorithm"] for r in got.values() if r["check"] != "ok"]
            if bad:
                sys.exit(f"{path}: {bad} differ from MPI_Reduce")
            cells = [f"{int(got[n]['bytes']) / 1e6:.3g} / {got[n]['messages']}" if n in got else "" for n, _ in names]
            print(f"| {de * 100:g} % | " + " | ".join(cells) + " |")
    huge = os.path.join(d, "huge.txt")
    if os.path.exists(huge):
        print("\nhuge_dim_bench (a dimension of 2^40):\n")
        print(open(huge).read().rstrip())
else:
    t = rounds(os.path.join(d, "p2_dropin.csv"))
    rle = "RLE pipeline (Hofmann and Rünger 2008)"
    table(t,
          [("mpi_reduce", "MPI_Reduce"), (rle, "RLE pipeline"), (rle + " [P1 compresses]", "RLE pipeline, P1 compresses"),
           ("automatic [span drop-in]", "drop-in, plan"), ("oneshot automatic [span drop-in]", "drop-in, one-shot")],
          [("mpi_reduce", "oneshot automatic [span drop-in]", "one-shot faster than MPI_Reduce"),
           ("oneshot automatic [span drop-in]", (rle, rle + " [P1 compresses]"), "one-shot × the faster RLE pipeline")])
