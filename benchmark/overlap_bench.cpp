// A step loop that hides a reduce (or allreduce) behind computation:
// start the call, compute for T_comp (calling test() every --test-every
// microseconds), wait; against the blocking call followed by the same
// computation, and against MPI_Ireduce (MPI_Iallreduce) of the dense buffer
// (MPI_Test at the same points).
//
//   mpiexec -n P overlap_bench [--collective reduce|allreduce|pattern] [--dim C] [--density d,d,...] [--dist ...]
//                              [--reps R] [--warmup W] [--compute F] [--test-every US] [--csv FILE] [--smoke]
//   overlap_bench --simulate P[,P...] --tuning FILE [--dim C] [--density ...] [--dist ...] [--compute F] [--test-every US]
//
// --simulate: no measurement; the reduce's cells predicted by the simulator
// (simulate_reduce, simulate_started_reduce) for P modelled ranks holding
// the inputs P ranks would, on the machine of the tuning file (its alpha,
// beta and gammas, e.g. one measured on the network modelled).
//
// Per density, every rank's Eigen::SparseVector<double> is reduced to rank 0
// (with allreduce: to every rank) into a std::vector<double>, by plans made
// before timing (policy automatic; one for the blocking rows, one for the
// started ones). T_comm is the median of the blocking call (for MPI, of
// MPI_Reduce or MPI_Allreduce), T_comp = F x T_comm (default 1), the
// computation a loop of multiply-adds on a private array that reads the
// clock. Rows, timed in interleaved rounds (the slowest rank's time):
//
//   blocking           plan.reduce (plan.allreduce): T_comm
//   start_wait         plan.start, wait (ratio: to blocking)
//   blocking+comp      the blocking call, then compute(T_comp)
//   started+comp       plan.start, compute(T_comp) with test(), wait
//                      (ratio: to blocking+comp)
//   mpi_reduce         MPI_Reduce (MPI_Allreduce) of the dense buffer: MPI's T_comm
//   mpi_reduce+comp    the same, then compute(T_comp)
//   mpi_ireduce+comp   MPI_Ireduce (MPI_Iallreduce), compute(T_comp) with
//                      MPI_Test, MPI_Wait
//
// (With allreduce the rows are named mpi_allreduce, mpi_allreduce+comp and
// mpi_iallreduce+comp.) --collective pattern: the reduce to rank 0 by
// fixed-pattern plans made from each rank's indices (make_pattern_plan,
// pattern_target::root(0)), called with the values alone; rank 0's sums at
// the plan's support are checked against MPI_Reduce's.
//
// overlap = (T_comp + T_comm - T_total) / min(T_comp, T_comm), T_comm the
// row's communication alone (blocking, mpi_reduce) in the same rounds: 1
// when the transfer hides entirely behind the computation, 0 when nothing
// does. "own": the started row's overlap with T_comm its own call alone
// (start_wait), where the started call runs another algorithm than the
// blocking one. The last round's started and MPI results, and one more started
// call with computation, are checked on the root against the blocking
// call's (relative 1e-9; with allreduce on every rank); a mismatch makes
// the exit status 1.

#include <sparse_reduce/simulate.hpp>
#include <sparse_reduce/sparse_reduce.hpp>

#include "options.hpp"
#include "timing.hpp"
#include "workload.hpp"

#include <boost/mpi.hpp>

#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mpi = boost::mpi;
namespace sr = sparse_reduce;
namespace sb = sparse_reduce::bench;

namespace {

struct options : sb::cell_options {
    double compute = 1.0;     // T_comp / T_comm
    double test_every = 100e-6; // seconds between test() calls
    bool allreduce = false;     // --collective allreduce
    bool pattern = false;       // --collective pattern
    std::vector<int> simulate;  // --simulate P,...
    std::string tuning;         // --tuning FILE
};

options parse(int argc, char** argv)
{
    options o;
    o.densities = {1e-2, 1.0};
    o.reps = 20;
    sb::parse_cell_options(argc, argv, o, 1, [&](const std::string& a, const auto& next) {
        if (a == "--compute") o.compute = std::stod(next());
        else if (a == "--test-every") o.test_every = std::stod(next()) * 1e-6;
        else if (a == "--collective") {
            const std::string c = next();
            if (c != "reduce" && c != "allreduce" && c != "pattern")
                throw std::invalid_argument("--collective: reduce, allreduce or pattern");
            o.allreduce = c == "allreduce";
            o.pattern = c == "pattern";
        } else if (a == "--simulate") o.simulate = sb::parse_numbers<int>(next());
        else if (a == "--tuning") o.tuning = next();
    });
    if (!o.simulate.empty() && (o.allreduce || o.pattern || o.tuning.empty()))
        throw std::invalid_argument("--simulate: the reduce only, with --tuning FILE");
    return o;
}

// Computes for `seconds` (multiply-adds over a private array), calling
// poll() every `every` seconds.
template <class Poll>
void compute(double seconds, double every, std::vector<double>& work, Poll&& poll)
{
    const double start = MPI_Wtime();
    double next = start + every;
    for (;;) {
        for (std::size_t i = 0; i < 64; ++i) work[i] = work[i] * 0.999999 + 1e-9;
        const double now = MPI_Wtime();
        if (now - start >= seconds) break;
        if (now >= next) {
            poll();
            next = now + every;
        }
    }
}

bool close(const std::vector<double>& a, const std::vector<double>& b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!(std::abs(a[i] - b[i]) <= 1e-9 * std::max(1.0, std::abs(b[i])))) return false;
    return true;
}

double overlap(double t_comp, double t_comm, double t_total)
{
    return (t_comp + t_comm - t_total) / std::min(t_comp, t_comm);
}

// The reduce's cells as the simulator predicts them (--simulate), rank 0
// getting the sum: T_comm the blocking call's, T_comp = F x T_comm; the
// started call alone and with the computation.
int predict(const options& o)
{
    const sr::network_model net = sr::load_tuning(o.tuning).machine;
    std::printf("%-4s %-6s %12s %14s %16s %8s %6s\n", "P", "dens", "blocking ms", "start_wait ms", "started+comp ms",
                "overlap", "own");
    for (const int P : o.simulate)
        for (const double density : o.densities) {
            std::vector<Eigen::SparseVector<double>> in;
            for (int r = 0; r < P; ++r) {
                const auto iv = sb::sparse_input(o.dim, density, o.dist, r, P, 1);
                auto& v = in.emplace_back(static_cast<Eigen::Index>(o.dim));
                v.reserve(static_cast<Eigen::Index>(iv.nnz()));
                for (std::size_t k = 0; k < iv.nnz(); ++k)
                    v.insertBack(static_cast<Eigen::Index>(iv.indices()[k])) = iv.values()[k];
            }
            std::vector<double> out;
            const std::span<const Eigen::SparseVector<double>> ins(in);
            const double t_comm = sr::simulate_reduce(ins, out, std::plus<>{}, 0, sr::policy::automatic{}, net).time;
            const sr::computation work{o.compute * t_comm, o.test_every};
            const auto s = sr::simulate_started_reduce(ins, out, std::plus<>{}, 0, work, sr::policy::automatic{}, net);
            std::printf("%-4d %-6g %12.3f %14.3f %16.3f %8.2f %6.2f\n", P, density, t_comm * 1e3, s.alone * 1e3,
                        s.call.time * 1e3, overlap(work.seconds, t_comm, s.call.time), s.overlap);
            std::printf("# %s %zu bytes %zu messages\n", s.call.algorithm.c_str(), s.call.bytes_total, s.call.messages_total);
        }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    mpi::environment env;
    mpi::communicator world;
    const options o = parse(argc, argv);
    if (!o.simulate.empty()) return world.rank() == 0 ? predict(o) : 0;
    const int me = world.rank(), P = world.size();
    std::FILE* csv = !o.csv.empty() && me == 0 ? std::fopen(o.csv.c_str(), "w") : nullptr;
    if (csv)
        std::fprintf(csv, "P,dim,density,row,t_comm_s,t_comp_s,min_s,median_s,max_s,overlap,ratio_to_blocking,overlap_own\n");
    if (me == 0)
        std::printf("%-6s %-19s %10s %10s %10s %8s %8s %6s\n", "dens", "row", "T_comm ms", "T_comp ms", "median ms",
                    "overlap", "ratio", "own");
    std::vector<double> work(64, 1.0);
    int mismatches = 0, cells = 0;
    for (const double density : o.densities) {
        const auto iv = sb::sparse_input(o.dim, density, o.dist, me, P, 1);
        Eigen::SparseVector<double> in(static_cast<Eigen::Index>(o.dim));
        in.reserve(static_cast<Eigen::Index>(iv.nnz()));
        for (std::size_t k = 0; k < iv.nnz(); ++k) in.insertBack(static_cast<Eigen::Index>(iv.indices()[k])) = iv.values()[k];
        std::vector<double> dense(o.dim, 0.0);
        for (std::size_t k = 0; k < iv.nnz(); ++k) dense[iv.indices()[k]] = iv.values()[k];
        // one plan per kind of call: a plan keeps one schedule per kind of
        // operation, and a blocking call of a sparse input may take another
        // path than a started one
        auto plan = sr::make_plan(world, 0, o.dim), started_plan = sr::make_plan(world, 0, o.dim);
        auto all_plan = sr::make_allreduce_plan(world, o.dim), all_started_plan = sr::make_allreduce_plan(world, o.dim);
        auto pattern_plan = sr::make_pattern_plan<double>(world, o.dim, in, sr::pattern_target::root(0)),
             pattern_started_plan = sr::make_pattern_plan<double>(world, o.dim, in, sr::pattern_target::root(0));
        const std::span<const double> values(in.valuePtr(), static_cast<std::size_t>(in.nonZeros()));
        const bool gets_result = me == 0 || o.allreduce;
        std::vector<double> out, started_out, mpi_out(gets_result ? o.dim : 0);
        const int n = static_cast<int>(o.dim);

        const auto blocking_call = [&] {
            if (o.pattern) return pattern_plan.reduce(values, out, std::plus<>{});
            return o.allreduce ? all_plan.allreduce(in, out, std::plus<>{}) : plan.reduce(in, out, std::plus<>{});
        };
        const auto blocking_comm = [&] { blocking_call(); };
        const auto start = [&] {
            if (o.pattern) return pattern_started_plan.start(values, started_out, std::plus<>{});
            return o.allreduce ? all_started_plan.start(in, started_out, std::plus<>{})
                               : started_plan.start(in, started_out, std::plus<>{});
        };
        const auto mpi_comm = [&] {
            if (o.allreduce) MPI_Allreduce(dense.data(), mpi_out.data(), n, MPI_DOUBLE, MPI_SUM, MPI_Comm(world));
            else MPI_Reduce(dense.data(), mpi_out.data(), n, MPI_DOUBLE, MPI_SUM, 0, MPI_Comm(world));
        };
        // T_comm in interleaved rounds of their own, as the rows below are timed
        const auto comm_rounds = sb::time_interleaved(world, o.warmup, o.reps, {blocking_comm, mpi_comm});
        const double t_comm = comm_rounds[0].median, t_mpi = comm_rounds[1].median;
        const double t_comp = o.compute * t_comm, t_comp_mpi = o.compute * t_mpi;
        const auto idle = [] {};

        const std::vector<std::function<void()>> rows = {
            blocking_comm,
            [&] { start().wait(); },
            [&] {
                blocking_comm();
                compute(t_comp, o.test_every, work, idle);
            },
            [&] {
                auto req = start();
                compute(t_comp, o.test_every, work, [&] { req.test(); });
                req.wait();
            },
            mpi_comm,
            [&] {
                mpi_comm();
                compute(t_comp_mpi, o.test_every, work, idle);
            },
            [&] {
                MPI_Request req;
                if (o.allreduce)
                    MPI_Iallreduce(dense.data(), mpi_out.data(), n, MPI_DOUBLE, MPI_SUM, MPI_Comm(world), &req);
                else MPI_Ireduce(dense.data(), mpi_out.data(), n, MPI_DOUBLE, MPI_SUM, 0, MPI_Comm(world), &req);
                compute(t_comp_mpi, o.test_every, work, [&] {
                    int flag = 0;
                    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                });
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            },
        };
        // each kind of call once, saying what it runs; the blocking call's
        // result is the reference the others are checked against
        const sr::report started_report = start().wait();
        const sr::report blocking_report = blocking_call();
        if (me == 0)
            std::printf("# density %g: blocking runs %s; started runs %s\n", density, blocking_report.algorithm.c_str(),
                        started_report.algorithm.c_str());
        const auto t = sb::time_interleaved(world, o.warmup, o.reps, rows);
        // the last round's results (checked outside the timing: a check of
        // 2^21 doubles takes about 2 ms)
        // a pattern plan's sums are at its support
        const auto mpi_sums = [&] {
            if (!o.pattern) return mpi_out;
            std::vector<double> at;
            for (const std::size_t i : pattern_plan.support()) at.push_back(mpi_out[i]);
            return at;
        };
        const bool ok = !gets_result || (close(started_out, out) && close(mpi_sums(), out));
        started_out.assign(started_out.size(), 0.0);
        rows[3](); // a started call with computation
        const bool ok_comp = !gets_result || close(started_out, out);
        if (!boost::mpi::all_reduce(world, ok && ok_comp, std::logical_and<>())) ++mismatches;
        ++cells;
        // per row: its name, the communication alone (T_comm) and the computation (T_comp) it holds,
        // and the row it is a ratio to
        struct row_info {
            const char* name;
            int comm_row;
            double t_comp;
            int versus;
        };
        const row_info info[] = {{"blocking", 0, 0, 0},
                                 {"start_wait", 0, 0, 0},
                                 {"blocking+comp", 0, t_comp, 2},
                                 {"started+comp", 0, t_comp, 2},
                                 {o.allreduce ? "mpi_allreduce" : "mpi_reduce", 4, 0, 4},
                                 {o.allreduce ? "mpi_allreduce+comp" : "mpi_reduce+comp", 4, t_comp_mpi, 5},
                                 {o.allreduce ? "mpi_iallreduce+comp" : "mpi_ireduce+comp", 4, t_comp_mpi, 5}};
        for (std::size_t r = 0; r < std::size(info); ++r) {
            const double comm = t[static_cast<std::size_t>(info[r].comm_row)].median;
            const double ov = info[r].t_comp > 0 ? overlap(info[r].t_comp, comm, t[r].median) : 0;
            const double ratio = t[r].median / t[static_cast<std::size_t>(info[r].versus)].median;
            const double own = r == 3 ? overlap(info[r].t_comp, t[1].median, t[r].median) : 0; // vs start_wait
            if (me == 0)
                std::printf("%-6g %-19s %10.3f %10.3f %10.3f %8.2f %8.3f %6.2f\n", density, info[r].name, comm * 1e3,
                            info[r].t_comp * 1e3, t[r].median * 1e3, ov, ratio, own);
            if (csv)
                std::fprintf(csv, "%d,%zu,%g,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.4f,%.4f,%.4f\n", P, o.dim, density,
                             info[r].name, comm, info[r].t_comp, t[r].min, t[r].median, t[r].max, ov, ratio, own);
        }
    }
    if (csv) std::fclose(csv);
    if (me == 0) std::printf("smoke: %d cells, %d mismatching\n", cells, mismatches);
    return mismatches == 0 ? 0 : 1;
}
