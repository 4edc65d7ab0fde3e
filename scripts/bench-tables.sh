#!/usr/bin/env bash
# Markdown tables from the CSV files of scripts/bench.sh:
#
#   scripts/bench-tables.sh DIR > DIR/tables.md
#
# One table per file and cell (P, dimension, density, placement, type, op):
# every algorithm's median time, bytes and messages (all ranks), its ratio to
# the lower bound and its speedup over MPI_Reduce, and where the file has
# them (newer runs) its ratio to the floor row and the root's minor page
# faults per call; for the simulator's files the modelled time and the
# speedup over the better dense-wire model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C
dir=${1:?usage: scripts/bench-tables.sh DIR}

for f in "$dir"/p*.csv; do
    [[ -s $f ]] || continue
    echo "## $(basename "$f")"
    awk -F, 'NR == 1 { # columns 1-18 are fixed; later ones are found by name
        for (i = 19; i <= NF; i++) col[$i] = i
        extra_head = ("ratio_to_floor" in col) ? " x floor | minor faults per call |" : ""
        extra_rule = ("ratio_to_floor" in col) ? "---|---|" : ""
        next
    }
    {
        cell = sprintf("P = %s, dimension %s, density %.4g, %s, %s, %s, root %s", $3, $4, $5, $6, $7, $8, $9)
        if (cell != last) {
            printf "\n%s\n\n| algorithm | wire | median us | min us | bytes | messages | x lower bound | speedup vs MPI_Reduce | check |%s\n|---|---|---|---|---|---|---|---|---|%s\n", cell, extra_head, extra_rule
            last = cell
        }
        extra = ("ratio_to_floor" in col) ? sprintf(" %.2f | %.1f |", $col["ratio_to_floor"], $col["minflt_per_call"]) : ""
        printf "| %s | %s | %.1f | %.1f | %s | %s | %.2f | %.2f | %s |%s\n", $1, $2, $11, $10, $13, $14, $16, $17, $18, extra
    }' "$f"
    echo
done
for f in "$dir"/sim_*.csv; do
    [[ -s $f ]] || continue
    echo "## $(basename "$f"): summary"
    echo
    echo "| P | density | lower bound us | best dense-wire model us | best fixed sparse_reduce policy us | automatic us | automatic's speedup over dense |"
    echo "|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 {
        key = $3 " " $5
        if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        bound[key] = $11
        if ($1 ~ /^dense/) { if (!(key in dense) || $8 < dense[key]) dense[key] = $8 }
        else if ($1 == "automatic") automatic[key] = $8
        else if (!(key in best) || $8 < best[key]) { best[key] = $8; name[key] = $1 }
    }
    END {
        for (i = 1; i <= n; i++) {
            k = order[i]; split(k, a, " ")
            printf "| %s | %s | %.0f | %.0f | %s %.0f | %.0f | %.2f |\n", a[1], a[2], bound[k], dense[k], name[k], best[k], automatic[k], dense[k] / automatic[k]
        }
    }' "$f"
    echo
done
for f in "$dir"/sim_*.csv; do
    [[ -s $f ]] || continue
    echo "## $(basename "$f")"
    awk -F, 'NR > 1 {
        cell = sprintf("P = %s, dimension %s, density %s, %s, network %s", $3, $4, $5, $6, $7)
        if (cell != last) {
            printf "\n%s\n\n| algorithm | wire | modelled us | bytes | messages | x lower bound | speedup vs dense |\n|---|---|---|---|---|---|---|\n", cell
            last = cell
        }
        printf "| %s | %s | %.1f | %s | %s | %.2f | %.2f |\n", $1, $2, $8, $9, $10, $12, $13
    }' "$f"
    echo
done
