// Prints a reduction tree as Graphviz text (sparse_reduce::to_dot) or as
// plain text, without MPI:
//
//   draw_trees binomial|k_ary|binary|chain|two_tree_a|two_tree_b P ROOT [commutative|non_commutative] [k] [--text]
//
// scripts/draw-trees.sh renders the pictures in doc/img/ with it.

#include <sparse_reduce/sparse_reduce.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s binomial|k_ary|binary|chain|two_tree_a|two_tree_b P ROOT [commutative|non_commutative] [k] [--text]\n",
                     argv[0]);
        return 2;
    }
    const std::string name = argv[1];
    const int p = std::atoi(argv[2]), root = std::atoi(argv[3]);
    const bool commutative = argc <= 4 || std::strcmp(argv[4], "non_commutative") != 0;
    const int k = argc > 5 ? std::atoi(argv[5]) : 3;
    const bool text = std::strcmp(argv[argc - 1], "--text") == 0;
    try {
        sr::tree t;
        if (name == "binomial") t = sr::binomial_tree(p, root, commutative);
        else if (name == "k_ary") t = sr::k_ary_tree(p, root, commutative, k);
        else if (name == "binary") t = sr::binary_tree(p, root, commutative);
        else if (name == "chain") t = sr::chain_tree(p, root, commutative);
        else if (name == "two_tree_a" || name == "two_tree_b") t = sr::two_trees(p, root, commutative)[name.back() == 'b'];
        else {
            std::fprintf(stderr, "unknown tree '%s'\n", name.c_str());
            return 2;
        }
        std::fputs((text ? sr::to_string(t) : sr::to_dot(t)).c_str(), stdout);
    } catch (const sr::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
