#!/usr/bin/env python3
"""The reduce_scatter table of doc/benchmarks.md from scripts/bench-reduce-scatter.sh's CSV files:

    scripts/reduce-scatter-tables.py [DIR]     (default doc/results/reduce_scatter)

P = 2: per row and density, the median over the processes of each one's
median (ms), and in brackets how many times faster than MPI_Reduce_scatter
(1 / the median ratio of the times in the same repetitions). P = 4 and 8: payload bytes (all ranks).
"""
import csv
import os
import statistics
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "doc/results/reduce_scatter"
names = [("MPI_Reduce_scatter(dense)", "MPI_Reduce_scatter (dense)"), ("floor (alltoallv + merge)", "floor"),
         ("reduce_scatter [index_value_vector]", "reduce_scatter [index_value_vector]"),
         ("reduce_scatter [Eigen]", "reduce_scatter [Eigen]"), ("reduce_scatter [span in]", "reduce_scatter [span in]")]


def load(f):
    rows = list(csv.DictReader(open(os.path.join(d, f))))
    bad = [(r["algorithm"], r["density"]) for r in rows if r["ok"] != "1"]
    if bad:
        sys.exit(f"{f}: {bad} differ from MPI_Reduce_scatter")
    return rows


rows = load("p2.csv")
t, ratio = {}, {}
for r in rows:
    k = (r["algorithm"], float(r["density"]))
    t.setdefault(k, []).append(float(r["median_ms"]))
    ratio.setdefault(k, []).append(float(r["vs_mpi_reduce_scatter"]))
n = max(len(v) for v in t.values())
print(f"P = 2, C = 2^21 doubles, +, uniform, block ranges; ms (median of {n} rounds), "
      "in brackets how many times faster than MPI_Reduce_scatter in the same repetitions:\n")
print("| density | " + " | ".join(x[1] for x in names) + " |")
print("|---" * (len(names) + 1) + "|")
for de in sorted({k[1] for k in t}):
    cells = []
    for a, _ in names:
        k = (a, de)
        if k not in t:
            cells.append("")
        elif a.startswith("MPI"):
            cells.append(f"{statistics.median(t[k]):.3g}")
        else:
            x = 1 / statistics.median(ratio[k])  # how many times faster than MPI_Reduce_scatter
            fx = f"{x:.0f}" if x >= 100 else f"{x:.3g}" if x >= 10 else f"{x:.2f}"
            cells.append(f"{statistics.median(t[k]):.3g} ({fx}×)")
    print(f"| {de * 100:g} % | " + " | ".join(cells) + " |")
for p in (4, 8):
    f = f"p{p}.csv"
    if not os.path.exists(os.path.join(d, f)):
        continue
    rows = load(f)
    print(f"\nP = {p}: payload MB (all ranks): " + ", ".join(
        f"{float(r['density']) * 100:g} %: sparse {float(r['bytes']) / 1e6:.3g}" for r in rows
        if r["algorithm"] == "reduce_scatter [index_value_vector]") + f"; MPI_Reduce_scatter (dense) "
        f"{float(rows[0]['bytes']) / 1e6:.3g}")
