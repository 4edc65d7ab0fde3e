#pragma once
// The floor of the reduce_scatter benchmarks (reduce_scatter_bench,
// assembly_bench): a careful hand-written sparse reduce_scatter of sorted
// uint32 indices and doubles over given ranges. The input's slices are cut
// by binary search, one MPI_Alltoall of the counts, two MPI_Alltoallv of
// indices and values straight from the input, the P runs merged in rank
// order into buffers sized once, before the timed loop.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

namespace sparse_reduce::bench {

struct floor_reduce_scatter {
    MPI_Comm comm = MPI_COMM_NULL; // a duplicate: no message of another row can match
    std::vector<std::size_t> ranges;
    std::vector<int> scount, sdispl, rcount, rdispl;
    std::vector<std::uint32_t> ridx, idx[2];
    std::vector<double> rval, val[2];
    std::size_t n = 0; // entries of the last result
    int last = 0;      // the buffer holding it

    floor_reduce_scatter(MPI_Comm world, std::vector<std::size_t> r, std::size_t received_bound, std::size_t result_bound)
        : ranges(std::move(r))
    {
        MPI_Comm_dup(world, &comm);
        const std::size_t p = ranges.size() - 1;
        scount.resize(p), sdispl.resize(p), rcount.resize(p), rdispl.resize(p);
        ridx.resize(received_bound), rval.resize(received_bound);
        for (int b = 0; b < 2; ++b) idx[b].resize(result_bound), val[b].resize(result_bound);
    }
    floor_reduce_scatter(const floor_reduce_scatter&) = delete;
    floor_reduce_scatter& operator=(const floor_reduce_scatter&) = delete;
    ~floor_reduce_scatter() { MPI_Comm_free(&comm); }

    void operator()(std::span<const std::uint32_t> in_idx, std::span<const double> in_val)
    {
        const int p = static_cast<int>(ranges.size()) - 1;
        for (int r = 0; r < p; ++r) {
            const auto lo = std::lower_bound(in_idx.begin(), in_idx.end(), ranges[static_cast<std::size_t>(r)]);
            const auto hi = std::lower_bound(lo, in_idx.end(), ranges[static_cast<std::size_t>(r) + 1]);
            sdispl[static_cast<std::size_t>(r)] = static_cast<int>(lo - in_idx.begin());
            scount[static_cast<std::size_t>(r)] = static_cast<int>(hi - lo);
        }
        MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm);
        int total = 0;
        for (int r = 0; r < p; ++r) rdispl[static_cast<std::size_t>(r)] = total, total += rcount[static_cast<std::size_t>(r)];
        MPI_Alltoallv(in_idx.data(), scount.data(), sdispl.data(), MPI_UINT32_T, ridx.data(), rcount.data(),
                      rdispl.data(), MPI_UINT32_T, comm);
        MPI_Alltoallv(in_val.data(), scount.data(), sdispl.data(), MPI_DOUBLE, rval.data(), rcount.data(),
                      rdispl.data(), MPI_DOUBLE, comm);
        // the runs in rank order: acc = run 0, then acc (+) run r
        const std::uint32_t* ci = ridx.data();
        const double* cv = rval.data();
        std::size_t cn = static_cast<std::size_t>(rcount[0]);
        int out = 0;
        for (int r = 1; r < p; ++r) {
            const std::uint32_t* bi = ridx.data() + rdispl[static_cast<std::size_t>(r)];
            const double* bv = rval.data() + rdispl[static_cast<std::size_t>(r)];
            const std::size_t bn = static_cast<std::size_t>(rcount[static_cast<std::size_t>(r)]);
            std::uint32_t* oi = idx[out].data();
            double* ov = val[out].data();
            std::size_t a = 0, b = 0, k = 0;
            while (a < cn && b < bn) {
                if (ci[a] < bi[b]) oi[k] = ci[a], ov[k++] = cv[a++];
                else if (bi[b] < ci[a]) oi[k] = bi[b], ov[k++] = bv[b++];
                else oi[k] = ci[a], ov[k++] = cv[a++] + bv[b++];
            }
            std::copy(ci + a, ci + cn, oi + k);
            std::copy(cv + a, cv + cn, ov + k);
            k += cn - a;
            std::copy(bi + b, bi + bn, oi + k);
            std::copy(bv + b, bv + bn, ov + k);
            k += bn - b;
            ci = oi, cv = ov, cn = k;
            last = out;
            out ^= 1;
        }
        if (p == 1) { // one rank: the input is the result
            std::copy(ci, ci + cn, idx[0].data());
            std::copy(cv, cv + cn, val[0].data());
            last = 0;
        }
        n = cn;
    }
};

} // namespace sparse_reduce::bench
