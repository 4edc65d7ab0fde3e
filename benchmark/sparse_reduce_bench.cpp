// sparse_reduce_bench: one mpirun, the same data, every way to reduce it.
//
//   mpiexec -n P sparse_reduce_bench [--dim N] [--density D]
//       [--dist uniform|zipf|identical|disjoint] [--root R] [--reps N]
//       [--warmup N] [--seed S] [--quick]
//
// Measured, OSU style (warm-up, then repetitions started together; the
// slowest rank's time; min / median / max):
//   mpi_reduce        MPI_Reduce(MPI_SUM) of the dense buffer: what MPI users do
//   boost_serialized  boost::mpi::reduce of a sparse vector serialised with
//                     Boost.Serialization and a merge operation
//   gatherv_merge     MPI_Gatherv of index/value pairs to the root, merged there
//   sparse_reduce     every policy x wire format, for index_value_vector in
//                     and out, and the dense drop-in (std::span with zeros)
// Every result is checked at the root against MPI_Reduce's (relative 1e-12):
// a mismatch makes the exit status 1. The lower bound of each row: the
// bytes that must reach the root (every other rank's nonzeros as
// index/value pairs, or its dense vector if smaller) over the memcpy
// bandwidth measured in this run, plus ceil(log2 P) latencies (8-byte
// ping-pong). CSV on stdout, a table on stderr.

#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/vector.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "calibrate.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace sr = sparse_reduce;
namespace bench = sparse_reduce::bench;

namespace {

// What Boost.MPI users reduce: a sparse vector as two std::vectors,
// serialised by Boost.Serialization on every hop.
struct serial_sparse {
    std::vector<std::uint32_t> idx;
    std::vector<double> val;
    template <class Archive>
    void serialize(Archive& ar, unsigned)
    {
        ar & idx & val;
    }
};

// The merge a Boost.MPI user writes: two sorted lists into one.
struct merge_sparse {
    serial_sparse operator()(const serial_sparse& a, const serial_sparse& b) const
    {
        serial_sparse c;
        c.idx.reserve(a.idx.size() + b.idx.size());
        c.val.reserve(a.idx.size() + b.idx.size());
        std::size_t i = 0, j = 0;
        while (i < a.idx.size() || j < b.idx.size()) {
            if (j == b.idx.size() || (i < a.idx.size() && a.idx[i] < b.idx[j])) {
                c.idx.push_back(a.idx[i]);
                c.val.push_back(a.val[i++]);
            } else if (i == a.idx.size() || b.idx[j] < a.idx[i]) {
                c.idx.push_back(b.idx[j]);
                c.val.push_back(b.val[j++]);
            } else {
                c.idx.push_back(a.idx[i]);
                c.val.push_back(a.val[i++] + b.val[j++]);
            }
        }
        return c;
    }
};

bool close(const std::vector<double>& got, const std::vector<double>& want)
{
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-12 * std::max(1.0, std::abs(want[i]))) return false;
    return true;
}

std::vector<double> densify(std::size_t n, const std::vector<std::uint32_t>& idx, const std::vector<double>& val)
{
    std::vector<double> d(n, 0.0);
    for (std::size_t k = 0; k < idx.size(); ++k) d[idx[k]] += val[k];
    return d;
}

// memcpy bandwidth of this process, bytes per second (16 MiB, median of 5).
double memcpy_bandwidth()
{
    const std::size_t n = std::size_t{16} << 20;
    std::vector<char> a(n, 1), b(n, 0);
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) {
        const auto s = std::chrono::steady_clock::now();
        std::memcpy(b.data(), a.data(), n);
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
    }
    volatile char sink = b[n / 2]; // the copies must happen
    (void)sink;
    return static_cast<double>(n) / bench::summarize(t).median;
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    std::size_t n = std::size_t{1} << 21;
    double density = 0.001;
    bench::placement dist = bench::placement::uniform;
    int root = 0, reps = 20, warmup = 3;
    std::uint64_t seed = 1;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--dim") n = std::stoull(next());
        else if (a == "--density") density = std::stod(next());
        else if (a == "--dist") dist = bench::parse_placement(next());
        else if (a == "--root") root = std::stoi(next());
        else if (a == "--reps") reps = std::stoi(next());
        else if (a == "--warmup") warmup = std::stoi(next());
        else if (a == "--seed") seed = std::stoull(next());
        else if (a == "--quick") quick = true;
        else {
            if (world.rank() == 0) std::fprintf(stderr, "sparse_reduce_bench: unknown argument '%s'\n", a.c_str());
            return 2;
        }
    }
    const int p = world.size(), me = world.rank();
    if (root < 0 || root >= p) {
        if (me == 0) std::fprintf(stderr, "sparse_reduce_bench: root %d out of range\n", root);
        return 2;
    }

    // ---- the data, the same on every run for a seed ----
    const auto sparse = bench::sparse_input(n, density, dist, me, p, seed);
    std::vector<double> dense(n, 0.0);
    for (std::size_t k = 0; k < sparse.nnz(); ++k) dense[sparse.indices()[k]] = sparse.values()[k];
    const serial_sparse mine{{sparse.indices().begin(), sparse.indices().end()}, {sparse.values().begin(), sparse.values().end()}};

    // ---- the lower bound ----
    const double bw = memcpy_bandwidth();
    const double alpha = bench::ping_pong(world, me, 8, 100);
    const double own_bytes = me == root ? 0.0 : std::min(12.0 * static_cast<double>(sparse.nnz()), 8.0 * static_cast<double>(n));
    const double must_move = boost::mpi::all_reduce(world, own_bytes, std::plus<>{});
    const double lower_bound = must_move / bw + std::ceil(std::log2(std::max(2, p))) * alpha * (p > 1);

    // ---- the reference: MPI_Reduce ----
    std::vector<double> want(n, 0.0);
    MPI_Reduce(dense.data(), want.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, root, world);
    MPI_Bcast(want.data(), static_cast<int>(n), MPI_DOUBLE, root, world);

    struct row {
        std::string name, wire;
        bench::stats t;
        std::size_t bytes = 0;
        bool ok = true;
    };
    std::vector<row> rows;
    int failures = 0;
    auto record = [&](std::string name, std::string wire, bench::stats t, std::size_t bytes, bool ok) {
        const int all_ok = boost::mpi::all_reduce(world, static_cast<int>(ok), boost::mpi::minimum<int>());
        failures += !all_ok;
        const auto total = boost::mpi::all_reduce(world, bytes, std::plus<>{});
        rows.push_back({std::move(name), std::move(wire), t, total, all_ok != 0});
        if (me == 0) std::fprintf(stderr, ".");
    };

    {
        std::vector<double> out(n);
        const auto t = bench::time_collective(world, warmup, reps, [&] {
            MPI_Reduce(dense.data(), out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, root, world);
        });
        record("mpi_reduce", "dense", t, me == root ? 0 : 8 * n, me != root || close(out, want));
    }
    {
        serial_sparse out;
        const auto t = bench::time_collective(world, warmup, reps, [&] { boost::mpi::reduce(world, mine, out, merge_sparse{}, root); });
        record("boost_serialized", "serialized", t, 0, me != root || close(densify(n, out.idx, out.val), want));
    }
    {
        serial_sparse out;
        std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
        std::vector<std::uint32_t> all_idx;
        std::vector<double> all_val;
        const auto t = bench::time_collective(world, warmup, reps, [&] {
            int count = static_cast<int>(mine.idx.size());
            MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, world);
            int total = 0;
            if (me == root)
                for (int r = 0; r < p; ++r) {
                    displs[static_cast<std::size_t>(r)] = total;
                    total += counts[static_cast<std::size_t>(r)];
                }
            all_idx.resize(static_cast<std::size_t>(total));
            all_val.resize(static_cast<std::size_t>(total));
            MPI_Gatherv(mine.idx.data(), count, MPI_UINT32_T, all_idx.data(), counts.data(), displs.data(), MPI_UINT32_T,
                        root, world);
            MPI_Gatherv(mine.val.data(), count, MPI_DOUBLE, all_val.data(), counts.data(), displs.data(), MPI_DOUBLE, root,
                        world);
            if (me == root) { // merge the P sorted runs pairwise, as such codes do
                out = {};
                for (int r = 0; r < p; ++r) {
                    const auto b = all_idx.begin() + displs[static_cast<std::size_t>(r)];
                    const auto v = all_val.begin() + displs[static_cast<std::size_t>(r)];
                    const serial_sparse run{{b, b + counts[static_cast<std::size_t>(r)]}, {v, v + counts[static_cast<std::size_t>(r)]}};
                    out = merge_sparse{}(out, run);
                }
            }
        });
        record("gatherv_merge", "index_value", t, 12 * mine.idx.size(), me != root || close(densify(n, out.idx, out.val), want));
    }

    // ---- sparse_reduce: every policy x wire, sparse in/out and the dense drop-in ----
    const sr::wire::format wires[] = {sr::wire::adaptive, sr::wire::dense, sr::wire::index_value, sr::wire::rle};
    auto run_policy = [&](const std::string& name, auto policy) {
        for (auto w : quick ? std::span<const sr::wire::format>(wires, 1) : std::span<const sr::wire::format>(wires)) {
            policy.wire = w;
            auto plan = sr::make_plan(world, root, n, policy);
            sr::index_value_vector<double> out;
            sr::report rep;
            const auto t = bench::time_collective(world, warmup, reps, [&] { rep = plan.reduce(sparse, out, std::plus<>{}); });
            record(name + " [index_value_vector]", sr::wire::to_string(w), t, rep.bytes_sent,
                   me != root || close(sr::to_dense(out), want));
            if (w != sr::wire::adaptive) continue;
            std::vector<double> dout(n);
            const auto td = bench::time_collective(world, warmup, reps, [&] {
                rep = plan.reduce(std::span<const double>(dense), std::span<double>(dout), std::plus<>{});
            });
            record(name + " [span drop-in]", sr::wire::to_string(w), td, rep.bytes_sent, me != root || close(dout, want));
        }
    };
    run_policy("binomial", sr::policy::binomial{});
    run_policy("k_ary", sr::policy::k_ary{});
    run_policy("binary", sr::policy::binary{});
    run_policy("chain", sr::policy::chain{});
    run_policy("optimal_binary", sr::policy::optimal_binary{});
    run_policy("two_tree", sr::policy::two_tree{});
    run_policy("automatic", sr::policy::automatic{});

    if (me == 0) {
        const double mpi = rows.front().t.median;
        std::fprintf(stderr, "\nP=%d dim=%zu density=%g dist=%s root=%d reps=%d; lower bound %.1f us (%.0f bytes at %.2f GB/s memcpy, alpha %.2f us)\n",
                     p, n, density, bench::to_string(dist), root, reps, lower_bound * 1e6, must_move, bw / 1e9, alpha * 1e6);
        std::fprintf(stderr, "%-40s %-12s %10s %10s %10s %12s %8s %8s %s\n", "algorithm", "wire", "min_us", "median_us",
                     "max_us", "bytes", "x_bound", "vs_mpi", "check");
        std::printf("algorithm,wire,P,dim,density,dist,min_us,median_us,max_us,bytes,lower_bound_us,ratio_to_bound,speedup_vs_mpi_reduce,check\n");
        for (const auto& r : rows) {
            std::fprintf(stderr, "%-40s %-12s %10.1f %10.1f %10.1f %12zu %8.2f %8.2f %s\n", r.name.c_str(), r.wire.c_str(),
                         r.t.min * 1e6, r.t.median * 1e6, r.t.max * 1e6, r.bytes, r.t.median / lower_bound, mpi / r.t.median,
                         r.ok ? "ok" : "MISMATCH");
            std::printf("%s,%s,%d,%zu,%g,%s,%.3f,%.3f,%.3f,%zu,%.3f,%.3f,%.3f,%s\n", r.name.c_str(), r.wire.c_str(), p, n,
                        density, bench::to_string(dist), r.t.min * 1e6, r.t.median * 1e6, r.t.max * 1e6, r.bytes,
                        lower_bound * 1e6, r.t.median / lower_bound, mpi / r.t.median, r.ok ? "ok" : "mismatch");
        }
        if (failures) std::fprintf(stderr, "sparse_reduce_bench: %d result(s) differ from MPI_Reduce\n", failures);
    }
    return failures ? 1 : 0;
}
