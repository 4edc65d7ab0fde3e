// allreduce of sparse vectors against MPI_Allreduce of the dense buffer and
// against what PyTorch and Horovod do for sparse tensors: an allgather of
// index/value pairs, then a local coalesce (sort by index, sum duplicates).
//
//   mpiexec -n P allreduce_bench [--dim C] [--density d,d,...] [--dist uniform|zipf|identical]
//                                [--repr sparse|dense|both] [--reps R] [--warmup W] [--csv FILE]
//                                [--only PREFIX] [--smoke]
//
// Every algorithm runs from a plan made before timing; every result is
// checked on every rank against MPI_Allreduce's (relative 1e-9: sums in
// another order round differently); a mismatch makes the exit status 1.
// Times: min / median / max over repetitions of the slowest rank, and the
// median ratio to MPI_Allreduce timed in the same repetitions. Bytes and
// messages: summed over ranks from the reports; for MPI_Allreduce the ring
// bound 2 (P-1)/P C v per rank, for the allgather the pairs each rank's
// entries make to P - 1 others, plus the counts.

#include <sparse_reduce/sparse_reduce.hpp>

#include "options.hpp"
#include "timing.hpp"
#include "workload.hpp"

#include <boost/mpi.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mpi = boost::mpi;
namespace sr = sparse_reduce;
namespace sb = sparse_reduce::bench;

namespace {

struct options : sb::cell_options {
    std::string repr = "both", only;
};

options parse(int argc, char** argv)
{
    options o;
    o.dim = std::size_t{1} << 18;
    o.densities = {1e-4, 1e-3, 1e-2, 1e-1, 1.0};
    sb::parse_cell_options(argc, argv, o, 0, [&](const std::string& a, const auto& next) {
        if (a == "--repr") o.repr = next();
        else if (a == "--only") o.only = next();
    });
    return o;
}

// PyTorch / Horovod for a sparse tensor: allgather the pairs, then coalesce.
void allgather_coalesce(MPI_Comm comm, const sr::index_value_vector<double>& in, std::vector<std::uint32_t>& idx,
                        std::vector<double>& val, std::vector<std::uint32_t>& out_idx, std::vector<double>& out_val)
{
    int P = 1;
    MPI_Comm_size(comm, &P);
    const int mine = static_cast<int>(in.nnz());
    std::vector<int> counts(static_cast<std::size_t>(P)), displ(static_cast<std::size_t>(P));
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    int total = 0;
    for (int r = 0; r < P; ++r) displ[static_cast<std::size_t>(r)] = total, total += counts[static_cast<std::size_t>(r)];
    idx.resize(static_cast<std::size_t>(total));
    val.resize(static_cast<std::size_t>(total));
    std::vector<std::uint32_t> mine_idx(in.indices().begin(), in.indices().end());
    MPI_Allgatherv(mine_idx.data(), mine, MPI_UINT32_T, idx.data(), counts.data(), displ.data(), MPI_UINT32_T, comm);
    MPI_Allgatherv(in.values().data(), mine, MPI_DOUBLE, val.data(), counts.data(), displ.data(), MPI_DOUBLE, comm);
    // coalesce: sort the pairs by index (stable: rank order within an index), sum duplicates
    std::vector<std::uint32_t> order(static_cast<std::size_t>(total));
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return idx[a] < idx[b]; });
    out_idx.clear();
    out_val.clear();
    for (std::uint32_t k : order) {
        if (!out_idx.empty() && out_idx.back() == idx[k]) out_val.back() += val[k];
        else out_idx.push_back(idx[k]), out_val.push_back(val[k]);
    }
}

bool close(const std::vector<double>& got, const std::vector<double>& want)
{
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-9 * std::max(1.0, std::abs(want[i]))) return false;
    return true;
}

struct row {
    std::string algorithm;
    sb::stats t;
    double ratio = 0; // median over repetitions of time / MPI_Allreduce's time in the same repetition
    double bytes = 0, messages = 0;
    bool ok = true;
};

// Times f and the baseline b alternately, repetition by repetition (this
// machine's speed drifts by 5x within a minute, so a ratio is only
// meaningful between neighbours): f's times and the median ratio.
std::pair<sb::stats, double> time_against(MPI_Comm comm, int warmup, int reps, const std::function<void()>& b,
                                          const std::function<void()>& f)
{
    for (int i = 0; i < warmup; ++i) b(), f();
    std::vector<double> tf, ratio;
    for (int i = 0; i < reps; ++i) {
        const double base = sb::time_collective(comm, 0, 1, b).median;
        tf.push_back(sb::time_collective(comm, 0, 1, f).median);
        ratio.push_back(base > 0 ? tf.back() / base : 0);
    }
    return {sb::summarize(tf), sb::summarize(ratio).median};
}

} // namespace

int main(int argc, char** argv)
{
    mpi::environment env(argc, argv);
    mpi::communicator world;
    const options o = parse(argc, argv);
    const int P = world.size(), me = world.rank();
    const std::size_t C = o.dim;
    std::FILE* csv = nullptr;
    if (me == 0 && !o.csv.empty()) {
        csv = std::fopen(o.csv.c_str(), "w");
        if (csv) std::fprintf(csv, "P,C,density,dist,repr,algorithm,min_ms,median_ms,max_ms,bytes,messages,vs_mpi_allreduce,ok\n");
    }
    if (me == 0)
        std::printf("%4s %9s %8s %9s %6s  %-72s %9s %9s %12s %8s %8s\n", "P", "C", "d", "dist", "repr", "algorithm",
                    "min ms", "median ms", "bytes", "msgs", "vs MPI");
    int cells = 0, bad = 0;
    for (double d : o.densities) {
        const auto sparse_in = sb::sparse_input(C, d, o.dist, me, P, 1);
        std::vector<double> dense_in(C, 0.0);
        for (std::size_t k = 0; k < sparse_in.nnz(); ++k) dense_in[sparse_in.indices()[k]] = sparse_in.values()[k];
        std::vector<double> want(C);
        MPI_Allreduce(dense_in.data(), want.data(), static_cast<int>(C), MPI_DOUBLE, MPI_SUM, world);
        std::vector<row> rows;
        const auto wanted = [&](const std::string& name) { return o.only.empty() || name.rfind(o.only, 0) == 0; };

        // the baselines
        std::vector<double> mpi_out(C);
        const auto mpi_allreduce = [&] {
            MPI_Allreduce(dense_in.data(), mpi_out.data(), static_cast<int>(C), MPI_DOUBLE, MPI_SUM, world);
        };
        {
            row r;
            r.algorithm = "MPI_Allreduce(dense)";
            auto& out = mpi_out;
            r.t = sb::time_collective(world, o.warmup, o.reps, mpi_allreduce);
            r.ratio = 1;
            r.bytes = 2.0 * (P - 1) * static_cast<double>(C) * sizeof(double); // the ring bound, all ranks
            r.messages = P > 1 ? 2.0 * (P - 1) * P : 0;
            r.ok = close(out, want);
            if (wanted("MPI")) rows.push_back(r);
        }
        if (wanted("allgather")) {
            row r;
            r.algorithm = "allgather+coalesce (PyTorch/Horovod)";
            std::vector<std::uint32_t> idx, oi;
            std::vector<double> val, ov;
            std::tie(r.t, r.ratio) = time_against(world, o.warmup, o.reps, mpi_allreduce,
                                                  [&] { allgather_coalesce(world, sparse_in, idx, val, oi, ov); });
            std::vector<double> got(C, 0.0);
            for (std::size_t k = 0; k < oi.size(); ++k) got[oi[k]] = ov[k];
            r.ok = close(got, want);
            const double n = mpi::all_reduce(world, static_cast<double>(sparse_in.nnz()), std::plus<>{});
            r.bytes = n * (P - 1) * (sizeof(std::uint32_t) + sizeof(double)) + P * (P - 1) * sizeof(int);
            r.messages = 3.0 * P * (P - 1);
            rows.push_back(r);
        }

        // ours: one plan per algorithm, sparse in/out and the dense drop-in
        const auto run = [&](const std::string& name, auto policy) {
            if (!wanted(name)) return;
            auto plan = sr::make_allreduce_plan(world, C, policy);
            for (const char* kind : {"sparse", "dense"}) {
                if (o.repr != "both" && o.repr != kind) continue;
                const bool sparse = std::string(kind) == "sparse";
                sr::index_value_vector<double> out_iv;
                std::vector<double> out_dense(C);
                sr::report rep;
                row r;
                std::tie(r.t, r.ratio) = time_against(world, o.warmup, o.reps, mpi_allreduce, [&] {
                    rep = sparse ? plan.allreduce(sparse_in, out_iv, std::plus<>{})
                                 : plan.allreduce(std::span<const double>(dense_in), std::span<double>(out_dense),
                                                  std::plus<>{});
                });
                r.algorithm = std::string(sparse ? "" : "[drop-in] ") + rep.algorithm;
                r.ok = close(sparse ? sr::to_dense(out_iv) : out_dense, want);
                r.bytes = mpi::all_reduce(world, static_cast<double>(rep.bytes_sent), std::plus<>{});
                r.messages = mpi::all_reduce(world, static_cast<double>(rep.messages_sent), std::plus<>{});
                rows.push_back(r);
            }
        };
        run("recursive_doubling", sr::policy::recursive_doubling{});
        run("reduce_broadcast(binomial)", sr::policy::reduce_broadcast{.tree = sr::policy::binomial{}});
        run("reduce_broadcast(two_tree)", sr::policy::reduce_broadcast{.tree = sr::policy::two_tree{}});
        run("split_allgather", sr::policy::split_allgather{});
        run("grouped", sr::policy::grouped{});
        run("automatic", sr::policy::automatic{});

        for (const auto& r : rows) {
            ++cells;
            const bool ok_everywhere = mpi::all_reduce(world, static_cast<int>(r.ok), mpi::minimum<int>()) == 1;
            bad += !ok_everywhere;
            if (me != 0) continue;
            const bool drop_in = r.algorithm.rfind("[drop-in]", 0) == 0 || r.algorithm.rfind("MPI", 0) == 0;
            const char* repr = drop_in ? "dense" : "sparse";
            const double ratio = r.ratio;
            std::printf("%4d %9zu %8g %9s %6s  %-72.72s %9.4f %9.4f %12.0f %8.0f %7.2fx%s\n", P, C, d,
                        sb::to_string(o.dist), repr, r.algorithm.c_str(), r.t.min * 1e3, r.t.median * 1e3, r.bytes,
                        r.messages, ratio, ok_everywhere ? "" : "  MISMATCH");
            if (csv)
                std::fprintf(csv, "%d,%zu,%g,%s,%s,\"%s\",%.6f,%.6f,%.6f,%.0f,%.0f,%.4f,%d\n", P, C, d,
                             sb::to_string(o.dist), repr, r.algorithm.c_str(), r.t.min * 1e3, r.t.median * 1e3,
                             r.t.max * 1e3, r.bytes, r.messages, ratio, ok_everywhere ? 1 : 0);
        }
    }
    if (csv) std::fclose(csv);
    if (me == 0) std::printf("%s: %d cells, %d mismatching\n", o.smoke ? "smoke" : "done", cells, bad);
    return bad ? 1 : 0;
}
