#!/usr/bin/env python3
"""Issue 13's tables (doc/benchmarks.md) from scripts/bench-floor.sh's CSVs:

    scripts/floor-tables.py [DIR]        (default doc/results/floor)

1. P = 2, 2^21: the one-shot call against the floor, Boost.MPI, Gatherv and
   MPI_Reduce;
2. the grid: one-shot automatic against the best fixed one-shot policy, and
   the one-shot call against a plan's call (automatic and binomial);
3. P = 4 and 8: bytes and messages of the sparse rows.
"""
import csv
import sys
from collections import defaultdict

d = sys.argv[1] if len(sys.argv) > 1 else "doc/results/floor"


def cells(path):
    out = defaultdict(dict)
    for r in csv.DictReader(open(path)):
        out[(int(r["dim"]), float(r["density"]))][r["algorithm"]] = r
    return out


def us(x):
    x = float(x)
    return f"{x / 1000:.2f} ms" if x >= 1000 else f"{x:.1f} µs"


p2 = cells(f"{d}/p2_floor.csv")
print("| density | MPI_Reduce | Boost.MPI | Gatherv + merge | floor | one-shot automatic [Eigen] | × floor | faster than Boost | × MPI_Reduce | root page faults per call |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (dim, dens), rows in sorted(p2.items()):
    a, f, b = rows["oneshot automatic [Eigen]"], rows["floor"], rows["boost_serialized"]
    g, m = rows["gatherv_merge"], rows["mpi_reduce"]
    t = float(a["median_us"])
    print(f"| {dens:.2%} | {us(m['median_us'])} | {us(b['median_us'])} | {us(g['median_us'])} | {us(f['median_us'])} | "
          f"{us(t)} | {t / float(f['median_us']):.2f} | {float(b['median_us']) / t:.2f}× | {t / float(m['median_us']):.2f} | "
          f"{float(a['minflt_per_call']):.1f} |")

grid = cells(f"{d}/p2_grid.csv")
grid.update(p2)
fixed = ["binomial", "k_ary", "binary", "chain", "optimal_binary", "two_tree"]
print()
print("| C | density | one-shot automatic | best fixed one-shot | automatic / best | slowest / best fixed | automatic plan | one-shot − plan (automatic) | binomial one-shot − plan |")
print("|---|---|---|---|---|---|---|---|---|")
for (dim, dens), rows in sorted(grid.items()):
    auto = float(rows["oneshot automatic [Eigen]"]["median_us"])
    best = min(fixed, key=lambda n: float(rows[f"oneshot {n} [Eigen]"]["median_us"]))
    bt = float(rows[f"oneshot {best} [Eigen]"]["median_us"])
    worst = max(float(rows[f"oneshot {n} [Eigen]"]["median_us"]) for n in fixed if n != "optimal_binary")
    plan = float(rows["automatic [index_value_vector]"]["median_us"])
    bplan = float(rows["binomial [index_value_vector]"]["median_us"])
    bone = float(rows["oneshot binomial [Eigen]"]["median_us"])
    print(f"| 2^{dim.bit_length() - 1} | {dens:.2%} | {us(auto)} | {best} {us(bt)} | {auto / bt:.2f} | {worst / bt:.2f} | {us(plan)} | "
          f"{auto - plan:+.1f} µs | {bone - bplan:+.1f} µs |")

print()
print("| P | density | binomial | two_tree | automatic (plan) | one-shot automatic [Eigen] |")
print("|---|---|---|---|---|---|")
for p in (4, 8):
    for (dim, dens), rows in sorted(cells(f"{d}/p{p}.csv").items()):
        def bm(name):
            r = rows[name]
            return f"{int(r['bytes']) / 1000:.1f} KB, {r['messages']} msgs" if int(r["bytes"]) < 10**6 else \
                f"{int(r['bytes']) / 1e6:.2f} MB, {r['messages']} msgs"
        print(f"| {p} | {dens:.2%} | {bm('binomial [index_value_vector]')} | {bm('two_tree [index_value_vector]')} | "
              f"{bm('automatic [index_value_vector]')} | {bm('oneshot automatic [Eigen]')} |")
