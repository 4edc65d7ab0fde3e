// Chen and Lee's (n.d.) optimal group size against the mesh simulator
// (sim/mesh_network.hpp, doc/mesh_validation.md).
//
//   group_size_validation [--quick]          (prints markdown)
//
// For every system (RS1, RS2, WS1, WS2), mesh N x N (4 .. 64; --quick: to
// 16), N_a and (T_x, T_m): the model's optimal admissible x
// (optimal_group_size, Prop. 3.7 with the errata) against the x of least
// simulated time over every admissible x (x x x groups, x | N), under
// virtual cut-through (the model's assumption: no per-hop latency) and
// under store-and-forward with 4 packets per message (hops cost). A row
// passes when T_sim(x_model) <= 1.05 T_sim(x_best). Exit status 1 if a
// cut-through row fails.
//
// The network times do not depend on N_a, T_x, T_m except the updating,
// which is linear in N_a T_x: each (system, N, x, switching) is simulated
// once, updating at N_a T_x = 1, and scaled.

#include <sparse_reduce/sim/mesh_network.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

namespace sr = sparse_reduce;
namespace rp = sparse_reduce::replication;
using sr::mesh::switching;

int main(int argc, char** argv)
{
    bool quick = false;
    for (int i = 1; i < argc; ++i) quick = quick || std::strcmp(argv[i], "--quick") == 0;
    const std::vector<int> sides = quick ? std::vector<int>{4, 8, 16} : std::vector<int>{4, 8, 16, 32, 64};
    const double accesses[] = {0.01, 0.1, 1, 10};
    const std::pair<double, double> costs[] = {{1.0, 0.1}, {1.5, 2.0}};
    const auto start = std::chrono::steady_clock::now();

    // (system, N, x, switching) -> {updating at N_a T_x = 1, integration + broadcasting}
    std::map<std::tuple<int, int, int, int>, std::pair<double, double>> net;
    const auto network_times = [&](rp::mesh_system sys, int N, int x, switching mode) {
        const auto key = std::tuple{static_cast<int>(sys), N, x, static_cast<int>(mode)};
        if (auto it = net.find(key); it != net.end()) return it->second;
        rp::params unit;
        unit.N = N, unit.N_a = 1, unit.T_x = 1, unit.T_m = 0;
        const auto t = sr::mesh::simulate_group_replication(sys, x, x, unit, mode);
        return net[key] = {t.update, t.integrate + t.broadcast};
    };
    const auto simulated = [&](rp::mesh_system sys, int x, const rp::params& p, switching mode) {
        const auto [u, ib] = network_times(sys, p.N, x, mode);
        const double n2 = static_cast<double>(p.N) * p.N;
        return u * p.N_a * p.T_x + ib + p.N_a * p.T_m + (1 / (static_cast<double>(x) * x) - 1 / n2) * p.T_m;
    };

    std::printf("| system | N | N_a | T_x | T_m | x model | x best (cut-through) | T(x model) / T(x best) | model T_o / simulated | "
                "x best (store-and-forward) | T(x model) / T(x best) | T(1) / T(x best) | T(N) / T(x best) |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int rows = 0, pass_ct = 0, pass_sf = 0, exact_model = 0;
    double worst_ct = 1, worst_sf = 1, worst_fit = 0;
    for (const auto sys : rp::all_mesh_systems)
        for (const int N : sides)
            for (const double na : accesses)
                for (const auto& [tx, tm] : costs) {
                    rp::params p;
                    p.N = N, p.N_a = na, p.T_x = tx, p.T_m = tm;
                    const int xm = rp::optimal_group_size(sys, p);
                    double ratio[2] = {0, 0}, best_ct = 0;
                    int best[2] = {1, 1};
                    for (const int m : {0, 1}) {
                        const auto mode = m == 0 ? switching::cut_through : switching::store_and_forward;
                        double best_t = 1e300;
                        for (const int x : rp::admissible_group_sizes(N)) {
                            const double t = simulated(sys, x, p, mode);
                            if (t < best_t) best_t = t, best[m] = x;
                        }
                        ratio[m] = simulated(sys, xm, p, mode) / best_t;
                        if (m == 0) best_ct = best_t;
                    }
                    // the two ends: group size 1 (allreduce of everything), N x N (reduce_scatter + allgather)
                    const double ends[2] = {simulated(sys, 1, p, switching::cut_through) / best_ct,
                                            simulated(sys, N, p, switching::cut_through) / best_ct};
                    // how far the model's T_o is from the cut-through simulation, at x model
                    const double fit = rp::square_total_time(sys, xm, p) / simulated(sys, xm, p, switching::cut_through);
                    worst_fit = std::max(worst_fit, std::abs(fit - 1));
                    ++rows;
                    pass_ct += ratio[0] <= 1.05;
                    pass_sf += ratio[1] <= 1.05;
                    exact_model += std::abs(fit - 1) < 1e-9;
                    worst_ct = std::max(worst_ct, ratio[0]);
                    worst_sf = std::max(worst_sf, ratio[1]);
                    std::printf("| %s | %d | %g | %g | %g | %d | %d | %.4f%s | %.6f | %d | %.4f%s | %.2f | %.2f |\n",
                                rp::to_string(sys).c_str(), N, na, tx, tm, xm, best[0], ratio[0],
                                ratio[0] > 1.05 ? " MISS" : "", fit, best[1], ratio[1], ratio[1] > 1.05 ? " MISS" : "",
                                ends[0], ends[1]);
                }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("\nrows: %d; cut-through: %d within 5%% (worst %.4f); store-and-forward: %d within 5%% (worst %.4f); "
                "model T_o equals the cut-through simulation in %d rows (largest relative gap %.2g); %.1f s\n",
                rows, pass_ct, worst_ct, pass_sf, worst_sf, exact_model, worst_fit, secs);
    std::printf("validation: %s\n", pass_ct == rows ? "PASS" : "FAIL");
    return pass_ct == rows ? 0 : 1;
}
