#pragma once
// The command line the cell benchmarks share (assembly_bench,
// reduce_scatter_bench, allreduce_bench, matrix_assembly_bench):
//
//   --dim N   --density a,b,...   --dist uniform|zipf|identical|disjoint|fem
//   --reps N  --warmup N          --csv FILE   --smoke
//
// and each one's own flags. --smoke sets the sizes CI runs them at: dimension
// 5003, densities 0.001, 0.1 and 1, two repetitions.

#include <cstddef>
#include <string>
#include <vector>

#include "workload.hpp"

namespace sparse_reduce::bench {

struct cell_options {
    std::size_t dim = std::size_t{1} << 21;
    std::vector<double> densities{1e-3, 1e-2, 1e-1};
    placement dist = placement::uniform;
    std::string csv;
    int reps = 30, warmup = 3;
    bool smoke = false;
};

// Reads argv into o, whose fields hold the benchmark's defaults. own(flag,
// next) reads a flag of the benchmark's own (next() is its value); others
// are ignored. --smoke: the smoke sizes and smoke_warmup warm-up calls.
template <class Own>
void parse_cell_options(int argc, char** argv, cell_options& o, int smoke_warmup, Own&& own)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--dim") o.dim = std::stoull(next());
        else if (a == "--density") o.densities = parse_numbers<double>(next());
        else if (a == "--dist") o.dist = parse_placement(next());
        else if (a == "--reps") o.reps = std::stoi(next());
        else if (a == "--warmup") o.warmup = std::stoi(next());
        else if (a == "--csv") o.csv = next();
        else if (a == "--smoke") o.smoke = true;
        else own(a, next);
    }
    if (o.smoke) {
        o.dim = 5003;
        o.densities = {1e-3, 0.1, 1.0};
        o.reps = 2;
        o.warmup = smoke_warmup;
    }
}

inline void parse_cell_options(int argc, char** argv, cell_options& o, int smoke_warmup)
{
    parse_cell_options(argc, argv, o, smoke_warmup, [](const std::string&, const auto&) {});
}

} // namespace sparse_reduce::bench
