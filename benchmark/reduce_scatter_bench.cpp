// reduce_scatter of sparse vectors against MPI_Reduce_scatter of the dense
// buffer and against a hand-written sparse reduce_scatter (the floor).
//
//   mpiexec -n P reduce_scatter_bench [--dim C] [--density d,d,...] [--dist uniform|zipf|identical]
//                                     [--reps R] [--warmup W] [--csv FILE] [--smoke]
//
// Every rank owns the block range of sparse_reduce::block_ranges (C / P
// indices). Rows:
//   MPI_Reduce_scatter(dense)       the dense buffer, every rank's block
//   floor (alltoallv + merge)       a careful hand-written sparse
//                                   reduce_scatter: the input's slices cut by
//                                   binary search, one MPI_Alltoall of the
//                                   counts, two MPI_Alltoallv of indices and
//                                   values straight from the input, the P runs
//                                   merged in rank order into buffers sized
//                                   once before the timed loop
//   reduce_scatter [index_value_vector]  sparse_reduce::reduce_scatter, in and out
//   reduce_scatter [Eigen]          the same call on Eigen::SparseVector in and out
//   reduce_scatter [span in]        the same call on the dense buffer, out an
//                                   index_value_vector
// The rows take turns repetition by repetition (each timed as the slowest
// rank's, after a barrier), so they see the same state of the machine; the
// ratio to MPI_Reduce_scatter is the median over repetitions of the row's
// time over MPI's in the same repetition. Every result is checked on every
// rank against MPI_Reduce_scatter's (relative 1e-9); a mismatch makes the
// exit status 1. Payload bytes (all ranks): the index/value pairs each rank
// sends to the other ranks' ranges (12 bytes each) for the floor, the dense
// blocks for MPI, and for the library's rows what it counted as sent (a
// slice that fills its range sends no indices; a bitmap where the tuning
// makes bytes dear); the library's count exchange and argument checks are
// not counted.

#include <sparse_reduce/sparse_reduce.hpp>

#include "floor_reduce_scatter.hpp"
#include "options.hpp"
#include "timing.hpp"
#include "workload.hpp"

#include <boost/mpi.hpp>

#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace mpi = boost::mpi;
namespace sr = sparse_reduce;
namespace sb = sparse_reduce::bench;

namespace {

using options = sb::cell_options;

options parse(int argc, char** argv)
{
    options o;
    o.densities = {1e-3, 1e-2, 1e-1, 1.0};
    sb::parse_cell_options(argc, argv, o, 0);
    return o;
}


bool close(const std::vector<double>& got, const std::vector<double>& want)
{
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-9 * std::max(1.0, std::abs(want[i]))) return false;
    return true;
}

// The block [lo, hi) of a sparse result, dense.
template <class Idx>
std::vector<double> block_of(std::size_t lo, std::size_t hi, std::span<const Idx> idx, std::span<const double> val)
{
    std::vector<double> d(hi - lo, 0.0);
    for (std::size_t k = 0; k < idx.size(); ++k)
        if (static_cast<std::size_t>(idx[k]) >= lo && static_cast<std::size_t>(idx[k]) < hi)
            d[static_cast<std::size_t>(idx[k]) - lo] = val[k];
        else
            return {}; // an entry outside the range: wrong
    return d;
}

} // namespace

int main(int argc, char** argv)
{
    mpi::environment env(argc, argv);
    mpi::communicator world;
    const options o = parse(argc, argv);
    const int P = world.size(), me = world.rank();
    const std::size_t C = o.dim;
    const auto ranges = sr::block_ranges(C, P);
    const std::size_t lo = ranges[static_cast<std::size_t>(me)], hi = ranges[static_cast<std::size_t>(me) + 1];
    std::vector<int> block_counts(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r)
        block_counts[static_cast<std::size_t>(r)] =
            static_cast<int>(ranges[static_cast<std::size_t>(r) + 1] - ranges[static_cast<std::size_t>(r)]);
    std::FILE* csv = nullptr;
    if (me == 0 && !o.csv.empty()) {
        csv = std::fopen(o.csv.c_str(), "w");
        if (csv) std::fprintf(csv, "P,C,density,dist,algorithm,min_ms,median_ms,max_ms,bytes,vs_mpi_reduce_scatter,ok\n");
    }
    if (me == 0)
        std::printf("%4s %9s %8s %9s  %-38s %9s %9s %12s %8s\n", "P", "C", "d", "dist", "algorithm", "min ms",
                    "median ms", "bytes", "vs MPI");
    int cells = 0, bad = 0;
    for (double d : o.densities) {
        const auto sparse_in = sb::sparse_input(C, d, o.dist, me, P, 1);
        std::vector<double> dense_in(C, 0.0);
        for (std::size_t k = 0; k < sparse_in.nnz(); ++k) dense_in[sparse_in.indices()[k]] = sparse_in.values()[k];
        Eigen::SparseVector<double> eigen_in(static_cast<Eigen::Index>(C));
        eigen_in.reserve(static_cast<Eigen::Index>(sparse_in.nnz()));
        for (std::size_t k = 0; k < sparse_in.nnz(); ++k) eigen_in.insertBack(sparse_in.indices()[k]) = sparse_in.values()[k];
        std::vector<double> want(hi - lo);
        MPI_Reduce_scatter(dense_in.data(), want.data(), block_counts.data(), MPI_DOUBLE, MPI_SUM, world);

        // payload bytes: this rank's entries outside its own range
        const std::size_t mine_outside =
            sparse_in.nnz() - static_cast<std::size_t>(
                                  std::lower_bound(sparse_in.indices().begin(), sparse_in.indices().end(), hi) -
                                  std::lower_bound(sparse_in.indices().begin(), sparse_in.indices().end(), lo));
        const double sparse_bytes = mpi::all_reduce(world, 12.0 * static_cast<double>(mine_outside), std::plus<>{});
        const double dense_bytes = static_cast<double>(P - 1) * static_cast<double>(C) * sizeof(double);
        const std::size_t total_nnz = mpi::all_reduce(world, sparse_in.nnz(), std::plus<>{});

        std::vector<double> mpi_out(hi - lo);
        sb::floor_reduce_scatter floor_rs(world, ranges, total_nnz, std::min(total_nnz, hi - lo));
        sr::index_value_vector<double> out_iv, out_span;
        Eigen::SparseVector<double> out_eigen;

        struct row {
            std::string name;
            std::function<void()> call;
            std::function<std::vector<double>()> result;
            double bytes;
        };
        // the library's rows: what its last call counted (kept with the
        // exchange's counts on the communicator), filled in after the timing
        constexpr double counted = -1;
        std::vector<row> rows{
            {"MPI_Reduce_scatter(dense)",
             [&] { MPI_Reduce_scatter(dense_in.data(), mpi_out.data(), block_counts.data(), MPI_DOUBLE, MPI_SUM, world); },
             [&] { return mpi_out; }, dense_bytes},
            {"floor (alltoallv + merge)", [&] { floor_rs(sparse_in.indices(), sparse_in.values()); },
             [&] {
                 return block_of<std::uint32_t>(lo, hi, {floor_rs.idx[floor_rs.last].data(), floor_rs.n},
                                                {floor_rs.val[floor_rs.last].data(), floor_rs.n});
             },
             sparse_bytes},
            {"reduce_scatter [index_value_vector]", [&] { sr::reduce_scatter(world, sparse_in, out_iv, std::plus<>{}); },
             [&] { return block_of<std::uint32_t>(lo, hi, out_iv.indices(), out_iv.values()); }, counted},
            {"reduce_scatter [Eigen]", [&] { sr::reduce_scatter(world, eigen_in, out_eigen, std::plus<>{}); },
             [&] {
                 const auto nz = static_cast<std::size_t>(out_eigen.nonZeros());
                 using index = Eigen::SparseVector<double>::StorageIndex;
                 return block_of<index>(lo, hi, {out_eigen.innerIndexPtr(), nz}, {out_eigen.valuePtr(), nz});
             },
             counted},
            {"reduce_scatter [span in]",
             [&] { sr::reduce_scatter(world, std::span<const double>(dense_in), out_span, std::plus<>{}); },
             [&] { return block_of<std::uint32_t>(lo, hi, out_span.indices(), out_span.values()); }, counted},
        };
        for (int i = 0; i < o.warmup; ++i)
            for (const auto& r : rows) r.call();
        std::vector<std::vector<double>> t(rows.size());
        for (int i = 0; i < o.reps; ++i)
            for (std::size_t k = 0; k < rows.size(); ++k) t[k].push_back(sb::time_collective(world, 0, 1, rows[k].call).median);
        // every library row sends the same entries in the same forms
        const auto& last = sr::detail::state_of(MPI_Comm(world)).memo<sr::detail::slice_counts>().last;
        const double library_bytes = mpi::all_reduce(world, static_cast<double>(last.bytes_sent), std::plus<>{});
        for (auto& r : rows)
            if (r.bytes == counted) r.bytes = library_bytes;
        for (std::size_t k = 0; k < rows.size(); ++k) {
            std::vector<double> ratio;
            for (int i = 0; i < o.reps; ++i)
                ratio.push_back(t[0][static_cast<std::size_t>(i)] > 0 ? t[k][static_cast<std::size_t>(i)] / t[0][static_cast<std::size_t>(i)] : 0);
            const auto s = sb::summarize(t[k]);
            const double r = sb::summarize(ratio).median;
            const bool ok = mpi::all_reduce(world, static_cast<int>(close(rows[k].result(), want)), mpi::minimum<int>()) == 1;
            ++cells;
            bad += !ok;
            if (me != 0) continue;
            std::printf("%4d %9zu %8g %9s  %-38s %9.4f %9.4f %12.0f %7.2fx%s\n", P, C, d, sb::to_string(o.dist),
                        rows[k].name.c_str(), s.min * 1e3, s.median * 1e3, rows[k].bytes, r, ok ? "" : "  MISMATCH");
            if (csv)
                std::fprintf(csv, "%d,%zu,%g,%s,\"%s\",%.6f,%.6f,%.6f,%.0f,%.4f,%d\n", P, C, d, sb::to_string(o.dist),
                             rows[k].name.c_str(), s.min * 1e3, s.median * 1e3, s.max * 1e3, rows[k].bytes, r, ok ? 1 : 0);
        }
    }
    if (csv) std::fclose(csv);
    if (me == 0) std::printf("%s: %d cells, %d mismatching\n", o.smoke ? "smoke" : "done", cells, bad);
    return bad ? 1 : 0;
}
