// sparse_reduce_bench: one mpirun, the same data, every way to reduce it.
//
//   mpiexec -n P sparse_reduce_bench [--dim N] [--density D]
//       [--dist uniform|zipf|identical|disjoint|fem] [--type double|float|int64]
//       [--op sum|max] [--root R] [--reps N] [--warmup N] [--seed S]
//       [--quick] [--only NAME] [--segment BYTES] [--header 0|1]
//       --only NAME runs the rows whose name starts with NAME: a whole name
//       is one row (plan rows: one per wire, one with --quick), e.g. to
//       profile it:  mpiexec -n 2 valgrind --tool=callgrind
//       --callgrind-out-file=cg.%p sparse_reduce_bench --only floor --reps 20
//   mpiexec -n 2 sparse_reduce_bench --smoke
//       every type x op x placement x density {0.001, 0.05, 1} at N = 65,543,
//       all algorithms and wires, 2 repetitions, roots 0 and P-1: CI's check
//       that every way of reducing agrees with MPI_Reduce (about 20 s).
//   sparse_reduce_bench --simulate P[,P...] [--net ib|10g|tuning] [--tuning FILE]
//       [--sim-out dense|sparse] [...]
//       one process: every policy in the simulator on P modelled ranks
//       (double, +), next to dense-wire models of MPI_Reduce. --net tuning
//       keeps the tuning file's own alpha and beta (a file measured on the
//       network simulated, e.g. doc/results/netbench/tuning-1gbit.txt);
//       --sim-out sparse writes an index_value_vector at the root, as the
//       measured "[index_value_vector]" rows do (default: a dense vector,
//       the output of the published sim tables). The lower bound
//       there is the root's link: the union of the other ranks' supports
//       (index/value, or dense if smaller) times beta, plus ceil(log2 P) alphas.
//
// Measured, OSU style (warm-up, then repetitions started together; the
// slowest rank's time; min / median / max):
//   mpi_reduce        MPI_Reduce of the dense buffer: what MPI users do
//   boost_serialized  boost::mpi::reduce of a sparse vector serialised with
//                     Boost.Serialization and a merge operation
//   gatherv_merge     MPI_Gatherv of index/value pairs to the root, merged there
//   floor             a careful hand-written sparse reduce (floor_reduce):
//                     what a call costs without a library
//   RLE pipeline (Hofmann and Rünger 2008)
//                     their pipelined reduce of the dense buffer: a chain,
//                     RLE of zero runs fused into the fold, 1 MiB blocks
//                     (rle_pipeline.hpp; sum of float or double);
//                     [P1 compresses]: its first rank encodes as well
//   <policy> [...]    every sparse_reduce policy x wire format for
//                     index_value_vector in and out, and the dense drop-in
//                     (std::span with zeros) with the adaptive wire, each
//                     through a plan made once
//   oneshot <policy> [Eigen]  sparse_reduce::reduce(world, in, out, op, root
//                     [, policy]) on Eigen::SparseVector, as a new user
//                     calls it (a plan per call), automatic and every fixed
//                     policy; oneshot automatic [span drop-in]: the same
//                     call on dense std::span buffers
// Every result is checked at the root against MPI_Reduce's (floating point:
// relative 1e-12 for double, 1e-5 for float; integers exactly): a mismatch
// makes the exit status 1. The lower bound of each row: the bytes that must
// reach the root (every other rank's nonzeros as index/value pairs, or its
// dense vector if smaller) over the memcpy bandwidth measured in this run,
// plus ceil(log2 P) latencies (8-byte ping-pong). Each row also carries its
// median over the floor row's (x_floor; 0 without a floor row) and the
// root's minor page faults per timed call (getrusage): faults are the kernel
// zeroing fresh pages, i.e. allocation per call. CSV on stdout (one header
// line unless --header 0; columns are only ever appended, so scripts reading
// columns by position read every file), a table on stderr.

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/simulate.hpp>
#include <sparse_reduce/policy_any.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/vector.hpp>

#include <Eigen/SparseCore>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "calibrate.hpp"
#include "rle_pipeline.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace sr = sparse_reduce;
namespace bench = sparse_reduce::bench;

namespace {

struct options {
    std::size_t n = std::size_t{1} << 21;
    double density = 0.001;
    bench::placement dist = bench::placement::uniform;
    std::string type = "double", op = "sum";
    int root = 0, reps = 20, warmup = 3;
    std::uint64_t seed = 1;
    bool quick = false, header = true;
    std::string only;
    std::size_t segment = 0;
};

// The wire a run used: "wire=..." in a report's or simulation's algorithm
// text (automatic chooses it), else the policy's.
std::string used_wire(const std::string& algorithm, sr::wire::format policy_wire)
{
    const auto at = algorithm.find("wire=");
    if (at == std::string::npos) return sr::wire::to_string(policy_wire);
    const auto end = algorithm.find_first_of(",)", at);
    return algorithm.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5);
}

template <class T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type<std::int64_t>() { return MPI_INT64_T; }

// What Boost.MPI users reduce: a sparse vector as two std::vectors,
// serialised by Boost.Serialization on every hop.
template <class T>
struct serial_sparse {
    std::vector<std::uint32_t> idx;
    std::vector<T> val;
    template <class Archive>
    void serialize(Archive& ar, unsigned)
    {
        ar & idx & val;
    }
};

// The merge a Boost.MPI user writes: two sorted lists into one.
template <class T, class Op>
struct merge_sparse {
    Op op;
    serial_sparse<T> operator()(const serial_sparse<T>& a, const serial_sparse<T>& b) const
    {
        serial_sparse<T> c;
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
                c.val.push_back(op(a.val[i++], b.val[j++]));
            }
        }
        return c;
    }
};

// The floor: a careful hand-written sparse reduce, the cost of a call
// without a library. A binomial tree on ranks relative to the root; a sender
// sends its index and value arrays as they are (its input, or its last
// merge) with two blocking MPI_Sends; a receiver sizes each message with
// MPI_Probe and merges it after what it holds (its lower relative ranks on
// the left of op). The buffers are sized once for the largest result, so a
// call neither allocates nor checks a capacity per entry.
template <class T>
struct floor_reduce {
    MPI_Comm comm = MPI_COMM_NULL; // a duplicate: no message of another row can match
    int root = 0;
    std::vector<std::uint32_t> idx[3]; // [0], [1]: merge targets in turn; [2]: the receive buffer
    std::vector<T> val[3];
    std::size_t bytes_sent = 0, messages_sent = 0; // the last call's, by this rank

    floor_reduce(MPI_Comm world, int root_rank, std::size_t bound) : root(root_rank)
    {
        MPI_Comm_dup(world, &comm);
        for (int b = 0; b < 3; ++b) { // sized (so touched) now, not in a timed call
            idx[b].resize(bound);
            val[b].resize(bound);
        }
    }
    floor_reduce(const floor_reduce&) = delete;
    floor_reduce& operator=(const floor_reduce&) = delete;
    ~floor_reduce() { MPI_Comm_free(&comm); }

    // The result on the root; empty elsewhere.
    template <class Op>
    std::pair<std::span<const std::uint32_t>, std::span<const T>> operator()(std::span<const std::uint32_t> in_idx,
                                                                              std::span<const T> in_val, const Op& op)
    {
        int p = 0, me = 0;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &me);
        const int rel = (me - root + p) % p;
        const std::uint32_t* ci = in_idx.data();
        const T* cv = in_val.data();
        std::size_t cn = in_idx.size();
        bytes_sent = messages_sent = 0;
        for (int mask = 1, out = 0; mask < p; mask <<= 1) {
            if (rel & mask) {
                const int parent = (rel - mask + root) % p;
                MPI_Send(ci, static_cast<int>(cn), MPI_UINT32_T, parent, 0, comm);
                MPI_Send(cv, static_cast<int>(cn), mpi_type<T>(), parent, 1, comm);
                bytes_sent = cn * (sizeof(std::uint32_t) + sizeof(T));
                messages_sent = 2;
                return {};
            }
            if (rel + mask >= p) continue;
            const int child = (rel + mask + root) % p;
            MPI_Status status;
            int m = 0;
            MPI_Probe(child, 0, comm, &status);
            MPI_Get_count(&status, MPI_UINT32_T, &m);
            const std::size_t rn = static_cast<std::size_t>(m);
            std::uint32_t *ri = idx[2].data(), *oi = idx[out].data();
            T *rv = val[2].data(), *ov = val[out].data();
            MPI_Recv(ri, m, MPI_UINT32_T, child, 0, comm, MPI_STATUS_IGNORE);
            MPI_Recv(rv, m, mpi_type<T>(), child, 1, comm, MPI_STATUS_IGNORE);
            std::size_t a = 0, b = 0, k = 0;
            while (a < cn && b < rn) {
                if (ci[a] < ri[b]) {
                    oi[k] = ci[a];
                    ov[k++] = cv[a++];
                } else if (ri[b] < ci[a]) {
                    oi[k] = ri[b];
                    ov[k++] = rv[b++];
                } else {
                    oi[k] = ci[a];
                    ov[k++] = op(cv[a++], rv[b++]);
                }
            }
            std::copy(ci + a, ci + cn, oi + k);
            std::copy(cv + a, cv + cn, ov + k);
            k += cn - a;
            std::copy(ri + b, ri + rn, oi + k);
            std::copy(rv + b, rv + rn, ov + k);
            k += rn - b;
            ci = oi;
            cv = ov;
            cn = k;
            out ^= 1;
        }
        return {{ci, cn}, {cv, cn}};
    }
};

template <class T>
bool close(const std::vector<T>& got, const std::vector<T>& want)
{
    if (got.size() != want.size()) return false;
    const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if constexpr (std::is_integral_v<T>) {
            if (got[i] != want[i]) return false;
        } else if (std::abs(got[i] - want[i]) > tol * std::max<T>(1, std::abs(want[i]))) {
            return false;
        }
    }
    return true;
}

// Absent entries read as 0, as in the dense buffers MPI_Reduce sees: for +
// that is the identity; for max the values are positive, so an index no
// rank holds is 0 in both.
template <class T, class Idx>
std::vector<T> densify(std::size_t n, std::span<const Idx> idx, std::span<const T> val)
{
    std::vector<T> d(n, T{});
    for (std::size_t k = 0; k < idx.size(); ++k) d[idx[k]] = val[k];
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

// Minor page faults of this process so far.
long minor_faults()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// Rank r's input in type T: the workload's values (in [0.5, 1.5)) as they
// are, or scaled to integers in [32, 96).
template <class T>
sr::index_value_vector<T> typed_input(const options& o, int rank, int ranks)
{
    const auto base = bench::sparse_input(o.n, o.density, o.dist, rank, ranks, o.seed);
    std::vector<T> val(base.nnz());
    for (std::size_t k = 0; k < val.size(); ++k)
        val[k] = std::is_integral_v<T> ? static_cast<T>(std::floor(base.values()[k] * 64)) : static_cast<T>(base.values()[k]);
    return sr::index_value_vector<T>(o.n, std::vector<std::uint32_t>(base.indices().begin(), base.indices().end()), val);
}

const char* csv_header = "algorithm,wire,P,dim,density,dist,type,op,root,min_us,median_us,max_us,bytes,messages,"
                         "lower_bound_us,ratio_to_bound,speedup_vs_mpi_reduce,check,ratio_to_floor,minflt_per_call\n";

// One cell: every algorithm on the same data. Returns the number of results
// that differ from MPI_Reduce's (the same on every rank).
template <class T, class Op>
int run_cell(const boost::mpi::communicator& world, const options& o, Op op, MPI_Op mpi_op, double bw, double alpha)
{
    const int p = world.size(), me = world.rank(), root = o.root;
    const std::size_t n = o.n;

    // ---- the data, the same on every run for a seed ----
    const auto sparse = typed_input<T>(o, me, p);
    const std::vector<T> dense = densify<T>(n, sparse.indices(), sparse.values());
    const serial_sparse<T> mine{{sparse.indices().begin(), sparse.indices().end()}, {sparse.values().begin(), sparse.values().end()}};
    Eigen::SparseVector<T> eigen_in(static_cast<Eigen::Index>(n));
    eigen_in.reserve(static_cast<Eigen::Index>(sparse.nnz()));
    for (std::size_t k = 0; k < sparse.nnz(); ++k) eigen_in.insertBack(sparse.indices()[k]) = sparse.values()[k];
    const std::size_t total_nnz = boost::mpi::all_reduce(world, sparse.nnz(), std::plus<>{});
    const double density = static_cast<double>(total_nnz) / (static_cast<double>(p) * static_cast<double>(n));

    // ---- the lower bound ----
    const double own_bytes = me == root ? 0.0
                                        : std::min((4.0 + sizeof(T)) * static_cast<double>(sparse.nnz()),
                                                   static_cast<double>(sizeof(T)) * static_cast<double>(n));
    const double must_move = boost::mpi::all_reduce(world, own_bytes, std::plus<>{});
    const double lower_bound = must_move / bw + std::ceil(std::log2(std::max(2, p))) * alpha * (p > 1);

    // ---- the reference: MPI_Reduce ----
    std::vector<T> want(n);
    MPI_Reduce(dense.data(), want.data(), static_cast<int>(n), mpi_type<T>(), mpi_op, root, world);
    MPI_Bcast(want.data(), static_cast<int>(n), mpi_type<T>(), root, world);

    struct timing {
        bench::stats t;
        double minflt_per_call = 0; // this rank's, over the timed repetitions
    };
    struct row {
        std::string name, wire;
        bench::stats t;
        double minflt_per_call = 0; // the root's
        std::size_t bytes = 0, messages = 0;
        bool ok = true;
    };
    std::vector<row> rows;
    int failures = 0;
    auto record = [&](std::string name, std::string wire, timing t, std::size_t bytes, std::size_t messages, bool ok) {
        const int all_ok = boost::mpi::all_reduce(world, static_cast<int>(ok), boost::mpi::minimum<int>());
        failures += !all_ok;
        const auto total = boost::mpi::all_reduce(world, bytes, std::plus<>{});
        const auto msgs = boost::mpi::all_reduce(world, messages, std::plus<>{});
        boost::mpi::broadcast(world, t.minflt_per_call, root); // the root's: it merges and allocates the most
        rows.push_back({std::move(name), std::move(wire), t.t, t.minflt_per_call, total, msgs, all_ok != 0});
    };
    // --only PREFIX: the rows whose name starts with it (e.g. "binomial [index").
    auto wanted = [&](const std::string& name) { return o.only.empty() || name.starts_with(o.only); };
    auto time = [&](const std::function<void()>& f) {
        for (int i = 0; i < o.warmup; ++i) f();
        const long faults = minor_faults();
        const auto t = bench::time_collective(world, 0, o.reps, f);
        return timing{t, static_cast<double>(minor_faults() - faults) / std::max(1, o.reps)};
    };

    // ---- the baselines ----
    if (wanted("mpi_reduce")) {
        std::vector<T> out(n);
        const auto t = time([&] { MPI_Reduce(dense.data(), out.data(), static_cast<int>(n), mpi_type<T>(), mpi_op, root, world); });
        record("mpi_reduce", "dense", t, me == root ? 0 : sizeof(T) * n, me != root, me != root || close(out, want));
    }
    if (wanted("boost_serialized")) {
        serial_sparse<T> out;
        const auto t = time([&] { boost::mpi::reduce(world, mine, out, merge_sparse<T, Op>{op}, root); });
        record("boost_serialized", "serialized", t, 0, 0,
               me != root || close(densify<T>(n, std::span<const std::uint32_t>(out.idx), std::span<const T>(out.val)), want));
    }
    if (wanted("gatherv_merge")) {
        serial_sparse<T> out;
        std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
        std::vector<std::uint32_t> all_idx;
        std::vector<T> all_val;
        const auto t = time([&] {
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
            MPI_Gatherv(mine.val.data(), count, mpi_type<T>(), all_val.data(), counts.data(), displs.data(), mpi_type<T>(),
                        root, world);
            if (me == root) { // merge the P sorted runs in rank order, as such codes do
                out = {};
                for (int r = 0; r < p; ++r) {
                    const auto b = all_idx.begin() + displs[static_cast<std::size_t>(r)];
                    const auto v = all_val.begin() + displs[static_cast<std::size_t>(r)];
                    const serial_sparse<T> run{{b, b + counts[static_cast<std::size_t>(r)]}, {v, v + counts[static_cast<std::size_t>(r)]}};
                    out = merge_sparse<T, Op>{op}(out, run);
                }
            }
        });
        record("gatherv_merge", "index_value", t, me == root ? 0 : (4 + sizeof(T)) * mine.idx.size(), 2 * (me != root),
               me != root || close(densify<T>(n, std::span<const std::uint32_t>(out.idx), std::span<const T>(out.val)), want));
    }
    if (wanted("floor")) {
        floor_reduce<T> reduce_floor(world, root, std::min(n, total_nnz));
        std::pair<std::span<const std::uint32_t>, std::span<const T>> out;
        const auto t = time([&] { out = reduce_floor(sparse.indices(), sparse.values(), op); });
        record("floor", "index_value", t, reduce_floor.bytes_sent, reduce_floor.messages_sent,
               me != root || close(densify<T>(n, out.first, out.second), want));
    }

    // Hofmann and Rünger's (2008) pipeline (chain, RLE, 1 MiB blocks), as the paper describes
    // it, and with P_1 compressing too: the published technique for dense
    // buffers full of zeros, the bar for the drop-in rows
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, std::plus<>>) {
        for (const bool first : {false, true}) {
            const std::string name = first ? "RLE pipeline (Hofmann and Rünger 2008) [P1 compresses]"
                                            : "RLE pipeline (Hofmann and Rünger 2008)";
            if (!wanted(name)) continue;
            bench::rle_pipeline_reduce<T> pipeline(world, root, first, mpi_type<T>());
            std::vector<T> out(n);
            const auto t = time([&] { pipeline(dense, out); });
            record(name, "rle", t, pipeline.bytes_sent, pipeline.messages_sent, me != root || close(out, want));
        }
    }

    // ---- sparse_reduce: every policy x wire, sparse in/out and the dense drop-in ----
    const sr::wire::format wires[] = {sr::wire::adaptive, sr::wire::dense, sr::wire::index_value, sr::wire::rle};
    const std::size_t wire_count = o.quick ? 1 : (std::is_floating_point_v<T> ? 4 : 3); // RLE: float and double
    auto run_policy = [&](const std::string& name, sr::policy::any policy) { // one body for every tree
        const std::string sparse_name = name + " [index_value_vector]", dense_name = name + " [span drop-in]";
        if (!wanted(sparse_name) && !wanted(dense_name)) return;
        for (std::size_t wi = 0; wi < wire_count; ++wi) {
            policy.visit([&](auto& tree) {
                tree.wire = wires[wi];
                tree.segment_bytes = o.segment;
            });
            auto plan = sr::make_plan(world, root, n, policy);
            sr::index_value_vector<T> out;
            sr::report rep;
            if (wanted(sparse_name)) {
                const auto t = time([&] { rep = plan.reduce(sparse, out, op); });
                record(sparse_name, used_wire(rep.algorithm, wires[wi]), t, rep.bytes_sent, rep.messages_sent,
                       me != root || close(densify<T>(n, out.indices(), out.values()), want));
            }
            if (wires[wi] != sr::wire::adaptive || !wanted(dense_name)) continue;
            std::vector<T> dout(n);
            const auto td = time([&] { rep = plan.reduce(std::span<const T>(dense), std::span<T>(dout), op); });
            record(dense_name, used_wire(rep.algorithm, wires[wi]), td, rep.bytes_sent, rep.messages_sent,
                   me != root || close(dout, want));
        }
    };
    run_policy("binomial", sr::policy::binomial{});
    run_policy("k_ary", sr::policy::k_ary{});
    run_policy("binary", sr::policy::binary{});
    run_policy("chain", sr::policy::chain{});
    run_policy("optimal_binary", sr::policy::optimal_binary{});
    run_policy("two_tree", sr::policy::two_tree{});
    run_policy("automatic", sr::policy::automatic{});

    // ---- the one-shot call on Eigen vectors, as a new user writes it: a plan per call ----
    // Timed in interleaved rounds (bench::time_interleaved): at P = 2 every
    // policy runs the same tree, and rows timed one after another would be
    // ranked by how far the branch predictor had learned the root's merge.
    // Each timed call follows one untimed call of the same row.
    {
        struct oneshot_row {
            std::string name;
            sr::wire::format wire;
            std::function<void()> call;
            Eigen::SparseVector<T> out; // a user's loop reuses it
            sr::report rep;
            long faults = 0;
        };
        std::vector<std::unique_ptr<oneshot_row>> os;
        auto add_oneshot = [&](const std::string& name, const sr::policy::any& policy) {
            const std::string eigen_name = "oneshot " + name + " [Eigen]";
            if (!wanted(eigen_name)) return;
            auto r = std::make_unique<oneshot_row>();
            oneshot_row* x = r.get();
            x->name = eigen_name;
            x->wire = policy.visit([](const auto& tree) { return tree.wire; });
            x->call = [&, x, policy] { x->rep = sr::reduce(world, eigen_in, x->out, op, root, policy); };
            os.push_back(std::move(r));
        };
        add_oneshot("automatic", sr::policy::automatic{});
        add_oneshot("binomial", sr::policy::binomial{});
        add_oneshot("k_ary", sr::policy::k_ary{});
        add_oneshot("binary", sr::policy::binary{});
        add_oneshot("chain", sr::policy::chain{});
        add_oneshot("optimal_binary", sr::policy::optimal_binary{});
        add_oneshot("two_tree", sr::policy::two_tree{});
        std::vector<std::function<void()>> calls;
        for (const auto& x : os) calls.push_back([x = x.get()] { x->call(); });
        for (int i = 0; i < o.warmup; ++i)
            for (const auto& x : os) x->call();
        const auto ts = bench::time_interleaved(world, 0, o.reps, calls, 1); // one settling call: a user's loop keeps its policy
        // Page faults per call, counted after the timing, in a loop of each
        // row's calls: getrusage is a system call (about 0.7 us here), so it
        // stays out of the timed calls.
        const int fault_calls = std::clamp(o.reps, 1, 20);
        for (const auto& x : os) {
            const long before = minor_faults();
            for (int i = 0; i < fault_calls; ++i) x->call();
            x->faults = minor_faults() - before;
        }
        for (std::size_t k = 0; k < os.size(); ++k) {
            auto& x = *os[k];
            using index = typename Eigen::SparseVector<T>::StorageIndex;
            const auto nnz = static_cast<std::size_t>(x.out.nonZeros());
            const double faults = static_cast<double>(x.faults) / fault_calls;
            record(x.name, used_wire(x.rep.algorithm, x.wire), timing{ts[k], faults}, x.rep.bytes_sent,
                   x.rep.messages_sent,
                   me != root || close(densify<T>(n, std::span<const index>(x.out.innerIndexPtr(), nnz),
                                                  std::span<const T>(x.out.valuePtr(), nnz)),
                                       want));
        }
    }
    if (wanted("oneshot automatic [span drop-in]")) {
        std::vector<T> out(n);
        sr::report rep;
        const auto t = time([&] { rep = sr::reduce(world, std::span<const T>(dense), std::span<T>(out), op, root); });
        record("oneshot automatic [span drop-in]", used_wire(rep.algorithm, sr::wire::adaptive), t, rep.bytes_sent,
               rep.messages_sent, me != root || close(out, want));
    }

    if (!o.only.empty() && rows.empty()) {
        if (me == 0) std::fprintf(stderr, "sparse_reduce_bench: no row's name starts with '%s'\n", o.only.c_str());
        return 1;
    }
    if (me == 0) {
        auto median_of = [&](const std::string& name) {
            const auto r = std::find_if(rows.begin(), rows.end(), [&](const row& x) { return x.name == name; });
            return r == rows.end() ? 0.0 : r->t.median;
        };
        const double mpi = median_of("mpi_reduce"), floor_median = median_of("floor");
        std::fprintf(stderr,
                     "\nP=%d dim=%zu density=%.4g dist=%s type=%s op=%s root=%d reps=%d; lower bound %.1f us (%.0f bytes at "
                     "%.2f GB/s memcpy, alpha %.2f us)\n",
                     p, n, density, bench::to_string(o.dist), o.type.c_str(), o.op.c_str(), root, o.reps, lower_bound * 1e6,
                     must_move, bw / 1e9, alpha * 1e6);
        std::fprintf(stderr, "%-36s %-11s %10s %10s %10s %11s %6s %8s %8s %8s %10s %s\n", "algorithm", "wire", "min_us",
                     "median_us", "max_us", "bytes", "msgs", "x_bound", "x_floor", "vs_mpi", "minflt", "check");
        for (const auto& r : rows) {
            const double speedup = mpi > 0 ? mpi / r.t.median : 0, to_floor = floor_median > 0 ? r.t.median / floor_median : 0;
            std::fprintf(stderr, "%-36s %-11s %10.1f %10.1f %10.1f %11zu %6zu %8.2f %8.2f %8.2f %10.1f %s\n", r.name.c_str(),
                         r.wire.c_str(), r.t.min * 1e6, r.t.median * 1e6, r.t.max * 1e6, r.bytes, r.messages,
                         r.t.median / lower_bound, to_floor, speedup, r.minflt_per_call, r.ok ? "ok" : "MISMATCH");
            std::printf("%s,%s,%d,%zu,%.6g,%s,%s,%s,%d,%.3f,%.3f,%.3f,%zu,%zu,%.3f,%.3f,%.3f,%s,%.3f,%.1f\n", r.name.c_str(),
                        r.wire.c_str(), p, n, density, bench::to_string(o.dist), o.type.c_str(), o.op.c_str(), root,
                        r.t.min * 1e6, r.t.median * 1e6, r.t.max * 1e6, r.bytes, r.messages, lower_bound * 1e6,
                        r.t.median / lower_bound, speedup, r.ok ? "ok" : "mismatch", to_floor, r.minflt_per_call);
        }
        std::fflush(stdout);
        if (failures) std::fprintf(stderr, "sparse_reduce_bench: %d result(s) differ from MPI_Reduce\n", failures);
    }
    return failures;
}

// The type and op named in the options.
int run_typed(const boost::mpi::communicator& world, const options& o, double bw, double alpha)
{
    auto with_op = [&]<class T>() {
        if (o.op == "max") return run_cell<T>(world, o, sr::max{}, MPI_MAX, bw, alpha);
        return run_cell<T>(world, o, std::plus<>{}, MPI_SUM, bw, alpha);
    };
    if (o.type == "float") return with_op.template operator()<float>();
    if (o.type == "int64") return with_op.template operator()<std::int64_t>();
    return with_op.template operator()<double>();
}

// ---- the simulator: P modelled ranks, double and + ----
int simulate(const options& o, const std::vector<int>& ranks, const std::string& net, const std::string& tuning_file,
             bool sparse_out)
{
    const sr::tuning tune = tuning_file.empty() ? sr::tuning{} : sr::load_tuning(tuning_file);
    const sr::cost_model model = net == "tuning" ? tune.machine
                                 : net == "10g"  ? tune.machine.ethernet_10g()
                                                 : tune.machine.infiniband();
    if (o.header) std::printf("algorithm,wire,P,dim,density,dist,network,modelled_us,bytes,messages,lower_bound_us,"
                              "ratio_to_bound,speedup_vs_dense\n");
    for (int p : ranks) {
        // Inputs: at most 2 GiB of them; beyond, rank r reads the input of rank r mod M.
        const double per_rank = 12.0 * o.density * static_cast<double>(o.n) + 64;
        const int distinct = static_cast<int>(std::clamp<double>(2.0e9 / per_rank, 1, p));
        const auto pool = bench::simulated_inputs(distinct, o.n, o.density, o.dist, o.seed);
        std::vector<const sr::index_value_vector<double>*> all(static_cast<std::size_t>(p));
        std::vector<char> held(o.n, 0); // the union of the other ranks' supports
        for (int r = 0; r < p; ++r) {
            all[static_cast<std::size_t>(r)] = &pool[static_cast<std::size_t>(r % distinct)];
            if (r != o.root)
                for (auto i : all[static_cast<std::size_t>(r)]->indices()) held[i] = 1;
        }
        // Lower bound on this network: the root must receive every index some
        // other rank holds (as index/value pairs, or dense if smaller) over its
        // one link, after ceil(log2 P) latencies.
        const double others = static_cast<double>(std::count(held.begin(), held.end(), 1));
        const double must_move = std::min(12.0 * others, 8.0 * static_cast<double>(o.n));
        const double bound = must_move * model.beta + std::ceil(std::log2(std::max(2, p))) * model.alpha;
        struct row {
            std::string name, wire;
            sr::simulation_result r;
        };
        std::vector<row> rows;
        const std::span<const sr::index_value_vector<double>* const> in(all);
        auto sim = [&](std::string name, auto policy) {
            if (!o.only.empty() && !name.starts_with(o.only) && !name.starts_with("dense")) return; // the baselines always
            // The output's kind is part of the schedule (a sparse output is
            // not windowed the same way), so it must match the measured row's.
            auto run = [&](auto out) { return sr::simulate_reduce(in, out, std::plus<>{}, o.root, policy, model); };
            auto r = sparse_out ? run(sr::index_value_vector<double>{}) : run(std::vector<double>{});
            std::fprintf(stderr, "P=%d %s: %.1f us\n", p, name.c_str(), r.time * 1e6);
            const std::string wire = used_wire(r.algorithm, policy.wire);
            rows.push_back({std::move(name), wire, std::move(r)});
        };
        // What MPI_Reduce does with a dense buffer, modelled: a binomial tree
        // without segments (its default for few, large messages) and a
        // segmented pipeline (binary, 128 KiB, as its tuned large-message rules).
        // (Unsegmented, every simulated rank holds buffers of the whole
        // vector: left out where they would not fit in 8 GB.)
        if (48.0 * static_cast<double>(o.n) * p < 8e9)
            sim("dense_binomial_unsegmented", sr::policy::binomial{.wire = sr::wire::dense, .segment_bytes = 8 * o.n});
        sim("dense_binary_128K", sr::policy::binary{.wire = sr::wire::dense});
        sim("binomial", sr::policy::binomial{});
        sim("k_ary", sr::policy::k_ary{});
        sim("binary", sr::policy::binary{});
        sim("chain", sr::policy::chain{});
        sim("optimal_binary", sr::policy::optimal_binary{.model = model});
        if (p >= 4) sim("two_tree", sr::policy::two_tree{});
        sr::tuning t = tune;
        t.machine = model;
        sim("automatic", sr::policy::automatic{.tuned = t});
        double dense_best = rows[0].r.time;
        for (const auto& r : rows)
            if (r.name.starts_with("dense")) dense_best = std::min(dense_best, r.r.time);
        for (const auto& r : rows)
            std::printf("%s,%s,%d,%zu,%g,%s,%s,%.1f,%zu,%zu,%.1f,%.2f,%.2f\n", r.name.c_str(), r.wire.c_str(), p, o.n, o.density,
                        bench::to_string(o.dist), net.c_str(), r.r.time * 1e6, r.r.bytes_total, r.r.messages_total, bound * 1e6,
                        r.r.time / bound, dense_best / r.r.time);
        std::fflush(stdout);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    options o;
    bool smoke = false;
    std::vector<int> simulate_ranks;
    std::string net = "ib", tuning_file;
    bool sparse_out = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--dim") o.n = std::stoull(next());
        else if (a == "--density") o.density = std::stod(next());
        else if (a == "--dist") o.dist = bench::parse_placement(next());
        else if (a == "--type") o.type = next();
        else if (a == "--op") o.op = next();
        else if (a == "--root") o.root = std::stoi(next());
        else if (a == "--reps") o.reps = std::stoi(next());
        else if (a == "--warmup") o.warmup = std::stoi(next());
        else if (a == "--seed") o.seed = std::stoull(next());
        else if (a == "--quick") o.quick = true;
        else if (a == "--only") o.only = next();
        else if (a == "--segment") o.segment = std::stoull(next());
        else if (a == "--header") o.header = next() != "0";
        else if (a == "--smoke") smoke = true;
        else if (a == "--simulate") simulate_ranks = bench::parse_numbers<int>(next());
        else if (a == "--net") net = next();
        else if (a == "--tuning") tuning_file = next();
        else if (a == "--sim-out") sparse_out = next() == "sparse";
        else {
            if (world.rank() == 0) std::fprintf(stderr, "sparse_reduce_bench: unknown argument '%s'\n", a.c_str());
            return 2;
        }
    }
    const bool known = (o.type == "double" || o.type == "float" || o.type == "int64") && (o.op == "sum" || o.op == "max") &&
                       (net == "ib" || net == "10g" || net == "tuning");
    if (!known) {
        if (world.rank() == 0) std::fprintf(stderr, "sparse_reduce_bench: --type double|float|int64, --op sum|max, --net ib|10g|tuning\n");
        return 2;
    }
    if (!simulate_ranks.empty()) return world.rank() == 0 ? simulate(o, simulate_ranks, net, tuning_file, sparse_out) : 0;

    const int p = world.size();
    if (o.root < 0 || o.root >= p) {
        if (world.rank() == 0) std::fprintf(stderr, "sparse_reduce_bench: root %d out of range\n", o.root);
        return 2;
    }
    const double bw = memcpy_bandwidth();
    const double alpha = p > 1 ? bench::ping_pong(world, world.rank(), 8, 100) : 0.0;
    if (world.rank() == 0 && o.header) std::fputs(csv_header, stdout);
    if (!smoke) return run_typed(world, o, bw, alpha) ? 1 : 0;

    int failures = 0, cells = 0;
    o.n = 65543; // odd: the last window is short
    o.reps = 2;
    o.warmup = 1;
    for (const char* type : {"double", "float", "int64"})
        for (const char* op : {"sum", "max"})
            for (auto dist : {bench::placement::uniform, bench::placement::zipf, bench::placement::identical,
                              bench::placement::disjoint, bench::placement::fem})
                for (double d : {0.001, 0.05, 1.0}) {
                    if (dist == bench::placement::fem && d != 0.001) continue; // fem ignores the density
                    o.type = type;
                    o.op = op;
                    o.dist = dist;
                    o.density = d;
                    o.root = cells++ % 2 ? p - 1 : 0;
                    failures += run_typed(world, o, bw, alpha);
                }
    if (world.rank() == 0) std::fprintf(stderr, "smoke: %d cells, %d mismatching result(s)\n", cells, failures);
    return failures ? 1 : 0;
}
