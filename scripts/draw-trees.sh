#!/usr/bin/env bash
# Renders the tree pictures of doc/trees.md into doc/img/ (needs graphviz).
# Usage: scripts/draw-trees.sh [build-dir]   (default build/release)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build/release}
cmake --build "$build" --target draw_trees -j2 >/dev/null
draw=$build/example/draw_trees
mkdir -p doc/img
render() { # name file args...
    local file=$1
    shift
    "$draw" "$@" | dot -Tpng -Gdpi=80 -o "doc/img/$file.png"
    echo "doc/img/$file.png"
}
render binomial_p8 binomial 8 0
render binomial_p8_root3 binomial 8 3 commutative
render k_ary3_p10 k_ary 10 0 commutative 3
render binary_p7 binary 7 3
render binary_p7_forward binary 7 0 non_commutative
render chain_p5 chain 5 0
render two_tree_a_p8 two_tree_a 8 3 non_commutative
render two_tree_b_p8 two_tree_b 8 3 non_commutative
