// Distributed vector assembly: every rank adds a sparse vector over the whole
// range [0, D) into a vector distributed by block ranges, as a finite-element
// code assembles its right-hand side. PETSc's VecSetValues + VecAssembly
// against sparse_reduce::reduce_scatter and a hand-written sparse
// reduce_scatter (the floor).
//
//   mpiexec -n P assembly_bench [--dim D] [--density d,d,...] [--reps R] [--warmup W]
//                               [--csv FILE] [--smoke] [PETSc options]
//
// Rank r's input: sb::sparse_input (uniform placement, values in
// [0.5, 1.5)); rank r owns [block_ranges(D, P)[r], [r + 1]). Rows:
//   PETSc VecAssembly               a Vec of VecCreateMPI (local size the
//                                   block's), per call VecSet(0), one
//                                   VecSetValues(ADD_VALUES) of the whole
//                                   input at global indices, off-process
//                                   ones too, VecAssemblyBegin/End
//   PETSc VecAssembly, VEC_SUBSET_OFF_PROC_ENTRIES  the same, the option set
//                                   once: PETSc reuses the first assembly's
//                                   communication pattern
//   floor (alltoallv + merge)       as in reduce_scatter_bench: slices cut by
//                                   binary search, MPI_Alltoall of the counts,
//                                   MPI_Alltoallv of indices and of values,
//                                   the P runs merged in rank order
//   reduce_scatter [index_value_vector]  sparse_reduce::reduce_scatter
//   pattern_plan reduce             a plan made once from the input's
//                                   support (make_pattern_plan), per call its
//                                   reduce of the values
//   reduce to rank 0 [one-shot]     sparse_reduce::reduce of the same inputs
//                                   (index_value_vector) to rank 0, automatic
//   pattern_plan reduce to rank 0   the plan of pattern_target::root(0)
//                                   (these two checked on rank 0 against
//                                   MPI_Reduce of the dense buffer, once)
// The PETSc rows are built only with PETSc (SPARSE_REDUCE_HAVE_PETSC); without
// it the others run and the ratios are to the floor. The rows take turns
// repetition by repetition, in an order shuffled per repetition (the same on
// every rank; timing.hpp says why), each timed as the slowest rank's after a
// barrier; the ratio is the median over repetitions of the row's time over
// the best PETSc row's (the lower median of the two) in the same repetition.
// Every row's result is checked on every rank against the floor's
// (relative 1e-9), the floor's against MPI_Reduce_scatter of the dense
// buffer, once, untimed; a mismatch names the row and makes the exit status
// 1. Payload bytes (all ranks): the index/value pairs each rank holds in the
// other ranks' blocks, 12 bytes each (PETSc's stash sends a PetscInt and a
// double per entry, the floor a uint32 and a double); for reduce_scatter and
// the plans, the bytes the library counted as sent (reduce_scatter: a double
// per entry and its uint32 index, or its slice's bitmap where the tuning
// makes bytes dear, or nothing for a slice that fills its range).

#include <sparse_reduce/sparse_reduce.hpp>

#include "floor_reduce_scatter.hpp"
#include "options.hpp"
#include "petsc_session.hpp"
#include "timing.hpp"
#include "workload.hpp"

#include <boost/mpi.hpp>

#ifdef SPARSE_REDUCE_HAVE_PETSC
#include <petscvec.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace mpi = boost::mpi;
namespace sr = sparse_reduce;
namespace sb = sparse_reduce::bench;

namespace {

#ifdef SPARSE_REDUCE_HAVE_PETSC
constexpr bool have_petsc = true;
#else
constexpr bool have_petsc = false;
#endif

using options = sb::cell_options;

options parse(int argc, char** argv)
{
    options o;
    sb::parse_cell_options(argc, argv, o, 1);
    return o;
}


#ifdef SPARSE_REDUCE_HAVE_PETSC
// One PETSc row: the Vec lives across the repetitions, as in a time loop.
struct petsc_assembly {
    Vec x = nullptr;
    std::span<const PetscInt> idx;
    std::span<const PetscScalar> val;

    petsc_assembly(std::size_t local, std::size_t global, bool subset, std::span<const PetscInt> i,
                   std::span<const PetscScalar> v)
        : idx(i), val(v)
    {
        PetscCallAbort(PETSC_COMM_WORLD, VecCreateMPI(PETSC_COMM_WORLD, static_cast<PetscInt>(local),
                                                      static_cast<PetscInt>(global), &x));
        if (subset) PetscCallAbort(PETSC_COMM_WORLD, VecSetOption(x, VEC_SUBSET_OFF_PROC_ENTRIES, PETSC_TRUE));
    }
    petsc_assembly(const petsc_assembly&) = delete;
    petsc_assembly& operator=(const petsc_assembly&) = delete;
    ~petsc_assembly() { VecDestroy(&x); }

    void operator()()
    {
        PetscCallAbort(PETSC_COMM_WORLD, VecSet(x, 0.0));
        PetscCallAbort(PETSC_COMM_WORLD,
                       VecSetValues(x, static_cast<PetscInt>(idx.size()), idx.data(), val.data(), ADD_VALUES));
        PetscCallAbort(PETSC_COMM_WORLD, VecAssemblyBegin(x));
        PetscCallAbort(PETSC_COMM_WORLD, VecAssemblyEnd(x));
    }

    // The local block, dense; empty when PETSc's ownership is not [lo, hi).
    std::vector<double> block(std::size_t lo, std::size_t hi) const
    {
        PetscInt first = 0, end = 0;
        PetscCallAbort(PETSC_COMM_WORLD, VecGetOwnershipRange(x, &first, &end));
        if (static_cast<std::size_t>(first) != lo || static_cast<std::size_t>(end) != hi) return {};
        const PetscScalar* a = nullptr;
        PetscCallAbort(PETSC_COMM_WORLD, VecGetArrayRead(x, &a));
        std::vector<double> d(a, a + (hi - lo));
        PetscCallAbort(PETSC_COMM_WORLD, VecRestoreArrayRead(x, &a));
        return d;
    }
};
#endif

bool close(const std::vector<double>& got, const std::vector<double>& want)
{
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-9 * std::max(1.0, std::abs(want[i]))) return false;
    return true;
}

// The block [lo, hi) of a sparse result, dense (zero off the support); empty
// when an entry lies outside it.
template <class Indices>
std::vector<double> block_of(std::size_t lo, std::size_t hi, const Indices& idx, std::span<const double> val)
{
    std::vector<double> d(hi - lo, 0.0);
    if (std::size(idx) != val.size()) return {};
    for (std::size_t k = 0; k < val.size(); ++k) {
        const auto i = static_cast<std::size_t>(idx[k]);
        if (i < lo || i >= hi) return {};
        d[i - lo] = val[k];
    }
    return d;
}

} // namespace

int main(int argc, char** argv)
{
    mpi::environment env(argc, argv);
#ifdef SPARSE_REDUCE_HAVE_PETSC
    sb::petsc_session petsc(argc, argv);
#endif
    mpi::communicator world;
    const options o = parse(argc, argv);
    const int P = world.size(), me = world.rank();
    const std::size_t D = o.dim;
    const auto ranges = sr::block_ranges(D, P);
    const std::size_t lo = ranges[static_cast<std::size_t>(me)], hi = ranges[static_cast<std::size_t>(me) + 1];
    std::vector<int> block_counts(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r)
        block_counts[static_cast<std::size_t>(r)] =
            static_cast<int>(ranges[static_cast<std::size_t>(r) + 1] - ranges[static_cast<std::size_t>(r)]);
    std::FILE* csv = nullptr;
    if (me == 0 && !o.csv.empty()) {
        csv = std::fopen(o.csv.c_str(), "w");
        if (csv) std::fprintf(csv, "P,D,density,row,min_ms,median_ms,max_ms,bytes,ratio_to,ratio,ok\n");
    }
    if (me == 0 && !have_petsc)
        std::printf("PETSc rows absent: built without PETSc (pkg-config petsc not found); ratios are to the floor\n");
#ifdef SPARSE_REDUCE_HAVE_PETSC
    if (D > static_cast<std::size_t>(PETSC_MAX_INT)) {
        if (me == 0) std::fprintf(stderr, "assembly_bench: --dim %zu exceeds PetscInt\n", D);
        return 2;
    }
#endif
    int cells = 0, bad = 0;
    for (double d : o.densities) {
        const auto in = sb::sparse_input(D, d, sb::placement::uniform, me, P, 1);

        // the floor's own check: the dense buffer's MPI_Reduce_scatter
        std::vector<double> want(hi - lo);
        {
            std::vector<double> dense(D, 0.0);
            for (std::size_t k = 0; k < in.nnz(); ++k) dense[in.indices()[k]] = in.values()[k];
            MPI_Reduce_scatter(dense.data(), want.data(), block_counts.data(), MPI_DOUBLE, MPI_SUM, world);
        }

        // payload bytes: this rank's entries outside its own block
        const auto own_lo = std::lower_bound(in.indices().begin(), in.indices().end(), lo);
        const std::size_t mine_outside =
            in.nnz() - static_cast<std::size_t>(std::lower_bound(own_lo, in.indices().end(), hi) - own_lo);
        const double pair_bytes = mpi::all_reduce(world, 12.0 * static_cast<double>(mine_outside), std::plus<>{});
        const std::size_t total_nnz = mpi::all_reduce(world, in.nnz(), std::plus<>{});

        sb::floor_reduce_scatter floor_rs(world, ranges, total_nnz, std::min(total_nnz, hi - lo));
        sr::index_value_vector<double> out_iv;

        struct row {
            std::string name;
            std::function<void()> call;
            std::function<std::vector<double>()> result;
            std::function<double()> bytes;
            bool petsc = false;
            bool to_root = false; // its result: the whole vector on rank 0, checked against want_all
        };
        std::vector<row> rows;
        const auto pairs = [&] { return pair_bytes; };

#ifdef SPARSE_REDUCE_HAVE_PETSC
        // PETSc's index type, converted once: a code assembling into PETSc
        // holds its indices as PetscInt
        const std::vector<PetscInt> petsc_idx(in.indices().begin(), in.indices().end());
        petsc_assembly petsc_plain(hi - lo, D, false, petsc_idx, in.values());
        petsc_assembly petsc_subset(hi - lo, D, true, petsc_idx, in.values());
        rows.push_back({"PETSc VecAssembly", [&] { petsc_plain(); }, [&] { return petsc_plain.block(lo, hi); }, pairs, true});
        rows.push_back({"PETSc VecAssembly, VEC_SUBSET_OFF_PROC_ENTRIES", [&] { petsc_subset(); },
                        [&] { return petsc_subset.block(lo, hi); }, pairs, true});
#endif
        const std::size_t floor_row = rows.size();
        rows.push_back({"floor (alltoallv + merge)", [&] { floor_rs(in.indices(), in.values()); },
                        [&] {
                            return block_of(lo, hi, std::span<const std::uint32_t>(floor_rs.idx[floor_rs.last].data(), floor_rs.n),
                                            {floor_rs.val[floor_rs.last].data(), floor_rs.n});
                        },
                        pairs});
        // reduce_scatter returns its ranges, not a report: its last call's
        // traffic is kept with the exchange's counts on the communicator
        const auto scatter_sent = [&] {
            const auto& counts = sr::detail::state_of(MPI_Comm(world)).memo<sr::detail::slice_counts>();
            return mpi::all_reduce(world, static_cast<double>(counts.last.bytes_sent), std::plus<>{});
        };
        rows.push_back({"reduce_scatter [index_value_vector]", [&] { sr::reduce_scatter(world, in, out_iv, std::plus<>{}); },
                        [&] { return block_of(lo, hi, out_iv.indices(), out_iv.values()); }, scatter_sent});
        // the plan is made once from the support (collective), as an
        // assembly loop over a fixed mesh would
        auto plan = sr::make_pattern_plan<double>(world, D, in.indices());
        std::vector<double> plan_out(plan.support().size());
        sr::report plan_report;
        rows.push_back({"pattern_plan reduce", [&] { plan_report = plan.reduce(in, plan_out, std::plus<>{}); },
                        [&] { return block_of(lo, hi, plan.support(), plan_out); },
                        [&] { return mpi::all_reduce(world, static_cast<double>(plan_report.bytes_sent), std::plus<>{}); }});
        // reduce to one rank: the one-shot call against the plan of root 0
        std::vector<double> want_all;
        {
            std::vector<double> dense(D, 0.0);
            for (std::size_t k = 0; k < in.nnz(); ++k) dense[in.indices()[k]] = in.values()[k];
            if (me == 0) want_all.resize(D);
            MPI_Reduce(dense.data(), want_all.data(), static_cast<int>(D), MPI_DOUBLE, MPI_SUM, 0, world);
        }
        sr::index_value_vector<double> reduced;
        auto root_plan = sr::make_pattern_plan<double>(world, D, in.indices(), sr::pattern_target::root(0));
        std::vector<double> root_out(root_plan.support().size());
        sr::report reduce_report, root_report;
        const auto sent = [&](const sr::report& r) {
            return [&] { return mpi::all_reduce(world, static_cast<double>(r.bytes_sent), std::plus<>{}); };
        };
        rows.push_back({"reduce to rank 0 [one-shot]", [&] { reduce_report = sr::reduce(world, in, reduced, std::plus<>{}, 0); },
                        [&] { return me == 0 ? block_of(0, D, reduced.indices(), reduced.values()) : want_all; },
                        sent(reduce_report), false, true});
        rows.push_back({"pattern_plan reduce to rank 0", [&] { root_report = root_plan.reduce(in, root_out, std::plus<>{}); },
                        [&] { return me == 0 ? block_of(0, D, root_plan.support(), root_out) : want_all; },
                        sent(root_report), false, true});

        std::vector<std::function<void()>> calls;
        for (const auto& r : rows) calls.push_back(r.call);
        const auto t = sb::time_rounds(world, o.warmup, o.reps, calls);

        // the base of the ratios: the PETSc row with the lower median, else the floor
        std::size_t base = floor_row;
        for (std::size_t k = 0; k < rows.size(); ++k)
            if (rows[k].petsc && (!rows[base].petsc || sb::summarize(t[k]).median < sb::summarize(t[base]).median)) base = k;

        // every rank checks every row, the floor against the dense reference
        const std::vector<double> reference = rows[floor_row].result();
        std::vector<int> ok(rows.size());
        for (std::size_t k = 0; k < rows.size(); ++k) {
            const bool mine = k == floor_row     ? close(reference, want)
                              : rows[k].to_root ? close(rows[k].result(), want_all)
                                                : close(rows[k].result(), reference);
            ok[k] = mpi::all_reduce(world, static_cast<int>(mine), mpi::minimum<int>());
        }
        std::vector<double> bytes;
        for (const auto& r : rows) bytes.push_back(r.bytes()); // collective for the plan's

        if (me == 0) {
            std::printf("\n### P = %d, D = %zu, density %g (uniform), %d repetitions\n\n", P, D, d, o.reps);
            std::printf("| %-46s | %9s | %9s | %9s | %10s | %12s |\n", "row", "median ms", "min ms", "max ms",
                        rows[base].petsc ? "vs PETSc" : "vs floor", "bytes");
            std::printf("|%s|----------:|----------:|----------:|-----------:|-------------:|\n", std::string(48, '-').c_str());
        }
        for (std::size_t k = 0; k < rows.size(); ++k) {
            std::vector<double> ratio;
            for (std::size_t i = 0; i < t[k].size(); ++i) ratio.push_back(t[base][i] > 0 ? t[k][i] / t[base][i] : 0);
            const auto s = sb::summarize(t[k]);
            const double r = sb::summarize(ratio).median;
            ++cells;
            bad += !ok[k];
            if (me != 0) continue;
            std::printf("| %-46s | %9.3f | %9.3f | %9.3f | %9.2fx | %12.0f |%s\n", rows[k].name.c_str(), s.median * 1e3,
                        s.min * 1e3, s.max * 1e3, r, bytes[k], ok[k] ? "" : " MISMATCH");
            if (!ok[k]) std::fprintf(stderr, "assembly_bench: MISMATCH in row '%s' at density %g\n", rows[k].name.c_str(), d);
            if (csv)
                std::fprintf(csv, "%d,%zu,%g,\"%s\",%.6f,%.6f,%.6f,%.0f,\"%s\",%.4f,%d\n", P, D, d, rows[k].name.c_str(),
                             s.min * 1e3, s.median * 1e3, s.max * 1e3, bytes[k], rows[base].name.c_str(), r, ok[k]);
        }
    }
    if (csv) std::fclose(csv);
    if (me == 0) std::printf("\n%s: %d cells, %d mismatching\n", o.smoke ? "smoke" : "done", cells, bad);
    return bad ? 1 : 0;
}
