// ML-EM image reconstruction (emission tomography style) with a grouped
// allreduce plan: every rank holds the rays of its own detector band, so its
// backprojection touches only part of the image, a sparse vector; each
// iteration sums the backprojections of all ranks with the
// group-replicated accumulation of Chen and Lee (n.d.) on a 2D cartesian mesh of ranks.
//
//   mpiexec -n 4 em_reconstruction [side] [rays_per_rank] [iterations]
//
//   x_j <- x_j / s_j * sum_i a_ij y_i / (A x)_i,   s_j = sum_i a_ij
//
// At the end rank 0 regenerates every rank's rays and runs the same EM
// serially; the images must agree (to rounding: sums in another order).

#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi/cartesian_communicator.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/environment.hpp>

#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace mpi = boost::mpi;
namespace sr = sparse_reduce;

namespace {

struct ray {
    std::vector<int> voxels; // the pixels it crosses (weight 1 each)
    double counts = 0;       // measured
};

// The true image: two discs on a faint background.
double truth(int side, int v)
{
    const double x = (v % side) / double(side) - 0.5, y = (v / side) / double(side) - 0.5;
    const double a = (x + 0.15) * (x + 0.15) + y * y < 0.02 ? 4 : 0;
    const double b = (x - 0.2) * (x - 0.2) + (y - 0.1) * (y - 0.1) < 0.01 ? 8 : 0;
    return 0.5 + a + b;
}

// Rank r's rays: short segments in directions 0, 45, 90, 135 degrees, all
// starting in the horizontal band of rows [r side / P, (r + 1) side / P).
std::vector<ray> rays_of(int rank, int ranks, int side, int count)
{
    std::mt19937_64 rng(1234 + static_cast<unsigned>(rank));
    const int band_lo = rank * side / ranks, band_hi = std::max(band_lo + 1, (rank + 1) * side / ranks);
    const int dx[4] = {1, 1, 0, -1}, dy[4] = {0, 1, 1, 1};
    std::vector<ray> out(static_cast<std::size_t>(count));
    for (auto& r : out) {
        int x = static_cast<int>(rng() % static_cast<unsigned>(side));
        int y = band_lo + static_cast<int>(rng() % static_cast<unsigned>(band_hi - band_lo));
        const int d = static_cast<int>(rng() % 4), len = 8 + static_cast<int>(rng() % 24);
        double expected = 0;
        for (int k = 0; k < len && x >= 0 && x < side && y < side; ++k, x += dx[d], y += dy[d]) {
            r.voxels.push_back(y * side + x);
            expected += truth(side, y * side + x);
        }
        r.counts = std::round(expected); // noiseless, rounded like a count
    }
    return out;
}

// sum_i a_ij w_i over this rank's rays, as a sparse vector over the image.
Eigen::SparseVector<double> backproject(const std::vector<ray>& rays, const std::vector<double>& w, int voxels,
                                        std::vector<double>& scratch)
{
    std::vector<int> touched;
    for (std::size_t i = 0; i < rays.size(); ++i)
        for (int v : rays[i].voxels) {
            if (scratch[static_cast<std::size_t>(v)] == 0) touched.push_back(v);
            scratch[static_cast<std::size_t>(v)] += w[i];
        }
    std::sort(touched.begin(), touched.end());
    Eigen::SparseVector<double> b(voxels);
    b.reserve(static_cast<Eigen::Index>(touched.size()));
    for (int v : touched) {
        b.insertBack(v) = scratch[static_cast<std::size_t>(v)];
        scratch[static_cast<std::size_t>(v)] = 0;
    }
    return b;
}

// One EM iteration given the summed backprojections; returns the log-likelihood before it.
template <class Sum>
double em_step(const std::vector<ray>& rays, std::vector<double>& x, const std::vector<double>& sens, Sum&& sum)
{
    std::vector<double> ratio(rays.size());
    double loglik = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
        double p = 0;
        for (int v : rays[i].voxels) p += x[static_cast<std::size_t>(v)];
        ratio[i] = p > 0 ? rays[i].counts / p : 0;
        loglik += p > 0 ? rays[i].counts * std::log(p) - p : 0;
    }
    const std::vector<double> back = sum(ratio, loglik);
    for (std::size_t v = 0; v < x.size(); ++v)
        if (sens[v] > 0) x[v] *= back[v] / sens[v];
    return loglik;
}

} // namespace

int main(int argc, char** argv)
{
    mpi::environment env(argc, argv);
    mpi::communicator world;
    const int side = argc > 1 ? std::atoi(argv[1]) : 256;
    const int per_rank = argc > 2 ? std::atoi(argv[2]) : 4000;
    const int iterations = argc > 3 ? std::atoi(argv[3]) : 10;
    const int voxels = side * side;

    // The ranks as a 2D mesh (MPI_Dims_create), not periodic.
    int dims[2] = {0, 0};
    MPI_Dims_create(world.size(), 2, dims);
    const mpi::cartesian_communicator cart(
        world, mpi::cartesian_topology(std::vector<mpi::cartesian_dimension>{{dims[0], false}, {dims[1], false}}));
    const auto rays = rays_of(cart.rank(), cart.size(), side, per_rank);

    // One plan for all iterations: the groups are chosen on its first call.
    auto plan = sr::make_allreduce_plan(cart, static_cast<std::size_t>(voxels), sr::policy::grouped{});
    std::vector<double> scratch(static_cast<std::size_t>(voxels), 0.0);
    int calls = 0;
    const auto global_sum = [&](const std::vector<double>& w) {
        const Eigen::SparseVector<double> mine = backproject(rays, w, voxels, scratch);
        Eigen::SparseVector<double> all;
        const sr::report r = plan.allreduce(mine, all, std::plus<>{});
        std::vector<double> dense(static_cast<std::size_t>(voxels), 0.0);
        for (Eigen::SparseVector<double>::InnerIterator it(all); it; ++it) dense[static_cast<std::size_t>(it.index())] = it.value();
        if (cart.rank() == 0 && calls++ == 0)
            std::printf("  %s: %zu of %d voxels in this rank's backprojection, %zu B sent by rank 0\n",
                        r.algorithm.c_str(), static_cast<std::size_t>(mine.nonZeros()), voxels, r.bytes_sent);
        return dense;
    };
    const std::vector<double> sens = global_sum(std::vector<double>(rays.size(), 1.0));
    std::vector<double> x(static_cast<std::size_t>(voxels), 1.0);
    bool increasing = true;
    double last = -INFINITY;
    for (int it = 0; it < iterations; ++it) {
        double local_ll = 0;
        em_step(rays, x, sens, [&](const std::vector<double>& ratio, double ll) {
            local_ll = ll;
            return global_sum(ratio);
        });
        const double ll = mpi::all_reduce(world, local_ll, std::plus<>{});
        if (cart.rank() == 0) std::printf("iteration %d: log-likelihood %.6f\n", it, ll);
        increasing = increasing && ll >= last - 1e-9 * std::abs(ll);
        last = ll;
    }

    // Serial check on rank 0: the same EM over every rank's rays.
    int ok = 1;
    if (cart.rank() == 0) {
        std::vector<ray> every;
        for (int r = 0; r < cart.size(); ++r) {
            auto part = rays_of(r, cart.size(), side, per_rank);
            every.insert(every.end(), part.begin(), part.end());
        }
        const auto serial_sum = [&](const std::vector<double>& w, double) {
            std::vector<double> b(static_cast<std::size_t>(voxels), 0.0);
            for (std::size_t i = 0; i < every.size(); ++i)
                for (int v : every[i].voxels) b[static_cast<std::size_t>(v)] += w[i];
            return b;
        };
        const std::vector<double> s = serial_sum(std::vector<double>(every.size(), 1.0), 0);
        std::vector<double> y(static_cast<std::size_t>(voxels), 1.0);
        for (int it = 0; it < iterations; ++it) em_step(every, y, s, serial_sum);
        double worst = 0;
        for (std::size_t v = 0; v < y.size(); ++v) worst = std::max(worst, std::abs(x[v] - y[v]) / std::max(1.0, std::abs(y[v])));
        ok = worst < 1e-9 && increasing;
        std::printf("groups %s on a %s mesh of ranks\n", sr::to_string(*plan.groups()).c_str(),
                    sr::to_string(plan.mesh()).c_str());
        std::printf("log-likelihood increased every iteration: %s\n", increasing ? "yes" : "NO");
        std::printf("largest relative difference to the serial EM: %.3g\n", worst);
        std::printf("matches the serial EM: %s\n", ok ? "OK" : "FAILED");
    }
    mpi::broadcast(world, ok, 0);
    return ok ? 0 : 1;
}
