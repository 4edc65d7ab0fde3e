#!/usr/bin/env bash
# Draws the benchmark's pictures from the CSV files of scripts/bench.sh:
#
#   scripts/plot-bench.sh DIR [IMG_DIR]       (IMG_DIR: default DIR)
#
#   IMG_DIR/latency_vs_density.png  P = 2, 2^21 doubles: latency against
#       density for every algorithm, sparse input (left) and the dense drop-in
#       (right); the shape of Hofmann and Rünger 2008's Figure 3 (left)
#   IMG_DIR/speedup_vs_size.png     P = 2: speedup over MPI_Reduce
#       against vector size at densities 0.01 and 0.001; its Figure 2 (left)
#   IMG_DIR/fem.png                 P = 2, FEM-like vectors: the root's
#       bandwidth (dense bytes / time) against vector size; its Figure 4 (right)
# Needs gnuplot (Debian: gnuplot-nox).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C
dir=${1:?usage: scripts/plot-bench.sh DIR [IMG_DIR]}
img=${2:-$dir}
mkdir -p "$img"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# series CSV NAME XCOL YEXPR FILTER: "x y" lines of one algorithm (column 1)
# with its rows sorted by x. YEXPR and FILTER are awk expressions over $N.
series() {
    [[ -s $1 ]] || return 0
    awk -F, -v name="$2" -v x="$3" "NR > 1 && \$1 == name && ($5) { print \$x, $4 }" "$1" | sort -g
}

# plot_lines OUTFILE "title|file" ...: a gnuplot plot command over series files.
plot_cmd() {
    local cmd="plot" sep=""
    for spec in "$@"; do
        local title=${spec%%|*} file=${spec#*|}
        [[ -s $file ]] || continue
        cmd+="$sep '$file' using 1:2 with linespoints title '$title'"
        sep=","
    done
    echo "$cmd"
}

sparse_algos=("mpi_reduce" "boost_serialized" "gatherv_merge" "binomial [index_value_vector]" "k_ary [index_value_vector]"
              "binary [index_value_vector]" "chain [index_value_vector]" "optimal_binary [index_value_vector]"
              "two_tree [index_value_vector]" "automatic [index_value_vector]")
dense_algos=("mpi_reduce" "binomial [span drop-in]" "k_ary [span drop-in]" "binary [span drop-in]" "chain [span drop-in]"
             "optimal_binary [span drop-in]" "two_tree [span drop-in]" "automatic [span drop-in]")

# ---- latency against density ----
left=() right=()
i=0
for a in "${sparse_algos[@]}"; do
    series "$dir/p2_density.csv" "$a" 5 '$11 / 1000' 1 >"$tmp/d$i"
    left+=("${a% \[*}|$tmp/d$i")
    i=$((i + 1))
done
for a in "${dense_algos[@]}"; do
    series "$dir/p2_density.csv" "$a" 5 '$11 / 1000' 1 >"$tmp/d$i"
    right+=("${a% \[*}|$tmp/d$i")
    i=$((i + 1))
done
gnuplot <<EOF
set terminal pngcairo noenhanced size 1400,560 font ",10"
set output "$img/latency_vs_density.png"
set multiplot layout 1,2 title "P = 2, 2^21 doubles (16 MiB), +, uniform positions: latency (median)"
set logscale xy
set grid
set xlabel "density (fraction of nonzeros per rank)"
set ylabel "latency [ms]"
set key left top
set title "sparse input: index_value_vector in and out"
$(plot_cmd "${left[@]}")
set title "dense drop-in: std::span with zeros in and out"
$(plot_cmd "${right[@]}")
unset multiplot
EOF

# ---- speedup over MPI_Reduce against size ----
panels=()
for d in 0.01 0.001; do
    specs=()
    for a in "boost_serialized" "gatherv_merge" "binomial [index_value_vector]" "two_tree [index_value_vector]" \
             "automatic [index_value_vector]" "binomial [span drop-in]" "automatic [span drop-in]"; do
        series "$dir/p2_size.csv" "$a" 4 '$17' "\$5 > $d * 0.7 && \$5 < $d * 1.3" >"$tmp/s$i"
        specs+=("$a|$tmp/s$i")
        i=$((i + 1))
    done
    panels+=("set title 'density $d'; $(plot_cmd "${specs[@]}")")
done
gnuplot <<EOF
set terminal pngcairo noenhanced size 1400,560 font ",10"
set output "$img/speedup_vs_size.png"
set multiplot layout 1,2 title "P = 2, doubles, +, uniform positions: speedup over MPI_Reduce of the dense buffer (median times)"
set logscale xy
set format x "2^%L"
set logscale x 2
set grid
set xlabel "vector size [elements]"
set ylabel "speedup over MPI_Reduce"
set key left top
$(printf '%s\n' "${panels[@]}")
unset multiplot
EOF

# ---- FEM-like data: the root's bandwidth ----
specs=()
for a in "mpi_reduce" "boost_serialized" "gatherv_merge" "binomial [index_value_vector]" "automatic [index_value_vector]" \
         "binomial [span drop-in]" "automatic [span drop-in]"; do
    series "$dir/p2_fem.csv" "$a" 4 '$4 * 8 / $11 / 1000' 1 >"$tmp/f$i"
    specs+=("$a|$tmp/f$i")
    i=$((i + 1))
done
gnuplot <<EOF
set terminal pngcairo noenhanced size 900,560 font ",10"
set output "$img/fem.png"
set title "P = 2, FEM-like vectors (564 * 2^s nodes, 6-11% nonzeros per rank, in subdomain runs)"
set logscale xy
set grid
set xlabel "vector size [elements]"
set ylabel "bandwidth at the root: dense bytes / latency [GB/s]"
set key left top
$(plot_cmd "${specs[@]}")
EOF
echo "plot-bench.sh: $img/latency_vs_density.png $img/speedup_vs_size.png $img/fem.png"
