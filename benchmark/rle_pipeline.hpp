#pragma once
// The pipelined MPI_Reduce with run-length encoding of Hofmann and Rünger
// (2008), written as the paper describes it, as a baseline row of
// sparse_reduce_bench:
//
//   P_1 -> P_2 -> ... -> P_p = root      a chain; the data cut into equal
//                                        blocks of `block_bytes` (1 MiB)
//   P_1                                  sends its blocks uncompressed
//   P_2 .. P_{p-1}                       a_C (+) b_i -> a_C: the incoming
//                                        block decoded, added to the local
//                                        block and encoded again in one pass;
//                                        MPI_Sendrecv sends block k - 1 while
//                                        block k arrives
//   P_p                                  a_C (+) b_p -> a, into the output
//
// The encoding: a run of two or more zeros becomes one NaN whose 52-bit
// (double) or 23-bit (float) mantissa holds the run's length; a single zero
// stays 0. It never makes a block longer. The paper marks NaNs of the data
// by their sign bit; this baseline's data holds none and it does not check.
// Sum only (the encoding's runs are runs of the sum's identity).
//
// `first_compresses`: P_1 encodes its blocks too (a variant, not the paper's:
// on shared memory a sparse block is cheaper to scan than to copy).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <mpi.h>

namespace sparse_reduce::bench {

template <class T>
    requires std::is_floating_point_v<T>
struct rle_pipeline_reduce {
    using bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
    static constexpr bits exponent = static_cast<bits>(sizeof(T) == 8 ? 0x7ff0000000000000ull : 0x7f800000ull);
    static constexpr std::size_t block_bytes = std::size_t{1} << 20;
    static constexpr std::size_t block = block_bytes / sizeof(T); // elements per block

    MPI_Comm comm = MPI_COMM_NULL; // a duplicate: no message of another row can match
    int root = 0;
    bool first_compresses = false;
    std::vector<T> a[2], c; // received blocks (the root receives ahead), the block to send
    std::size_t bytes_sent = 0, messages_sent = 0; // the last call's, by this rank

    rle_pipeline_reduce(MPI_Comm world, int root_rank, bool compress_first, MPI_Datatype type)
        : root(root_rank), first_compresses(compress_first), type_(type)
    {
        MPI_Comm_dup(world, &comm);
        for (auto* v : {&a[0], &a[1], &c}) v->resize(block); // touched now, not in a timed call
    }
    rle_pipeline_reduce(const rle_pipeline_reduce&) = delete;
    rle_pipeline_reduce& operator=(const rle_pipeline_reduce&) = delete;
    ~rle_pipeline_reduce() { MPI_Comm_free(&comm); }

    static T marker(std::size_t run) { return std::bit_cast<T>(static_cast<bits>(exponent | static_cast<bits>(run))); }
    static std::size_t run_of(T x) { return static_cast<std::size_t>(std::bit_cast<bits>(x) & ~exponent); }

    // The tokens of a (nt of them, plain values and zero-run markers) added to
    // b, the result encoded into out; returns the tokens written. With a ==
    // nullptr: b alone, encoded.
    static std::size_t fold_encode(const T* a, std::size_t nt, const T* b, std::size_t len, T* out)
    {
        std::size_t k = 0, zeros = 0;
        const auto flush = [&] {
            if (zeros == 1) out[k++] = T(0);
            else if (zeros > 1) out[k++] = marker(zeros);
            zeros = 0;
        };
        const auto put = [&](T v) {
            if (v == T(0)) {
                ++zeros;
            } else {
                flush();
                out[k++] = v;
            }
        };
        if (!a) {
            for (std::size_t i = 0; i < len; ++i) put(b[i]);
        } else {
            for (std::size_t t = 0, i = 0; t < nt; ++t) {
                if (std::isnan(a[t])) {
                    const std::size_t n = run_of(a[t]);
                    for (std::size_t j = 0; j < n; ++j) put(b[i + j]);
                    i += n;
                } else {
                    put(a[t] + b[i++]);
                }
            }
        }
        flush();
        return k;
    }

    // The root's step: tokens of a added to b, written out whole.
    static void fold_decode(const T* a, std::size_t nt, const T* b, T* out)
    {
        for (std::size_t t = 0, i = 0; t < nt; ++t) {
            if (std::isnan(a[t])) {
                const std::size_t n = run_of(a[t]);
                std::memcpy(out + i, b + i, n * sizeof(T));
                i += n;
            } else {
                out[i] = a[t] + b[i];
                ++i;
            }
        }
    }

    // in: this rank's dense vector; out: the sum on the root (n elements), untouched elsewhere.
    void operator()(const std::vector<T>& in, std::vector<T>& out)
    {
        int p = 0, me = 0;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &me);
        const std::size_t n = in.size(), blocks = (n + block - 1) / block;
        const int pos = (me - root - 1 + 2 * p) % p; // the root is last
        const int prev = (me - 1 + p) % p, next = (me + 1) % p;
        const auto len = [&](std::size_t k) { return std::min(block, n - k * block); };
        bytes_sent = messages_sent = 0;
        const auto sent = [&](std::size_t tokens) {
            bytes_sent += tokens * sizeof(T);
            ++messages_sent;
        };
        if (p == 1) {
            std::copy(in.begin(), in.end(), out.begin());
            return;
        }
        if (pos == 0) { // P_1
            for (std::size_t k = 0; k < blocks; ++k) {
                const T* b = in.data() + k * block;
                const std::size_t nt = first_compresses ? fold_encode(nullptr, 0, b, len(k), c.data()) : len(k);
                MPI_Send(first_compresses ? c.data() : b, static_cast<int>(nt), type_, next, 0, comm);
                sent(nt);
            }
            return;
        }
        if (me == root) { // P_p: block k + 1 arrives while block k is added
            MPI_Request req = MPI_REQUEST_NULL;
            MPI_Irecv(a[0].data(), static_cast<int>(block), type_, prev, 0, comm, &req);
            for (std::size_t k = 0; k < blocks; ++k) {
                MPI_Status st;
                MPI_Wait(&req, &st);
                int nt = 0;
                MPI_Get_count(&st, type_, &nt);
                if (k + 1 < blocks) MPI_Irecv(a[(k + 1) % 2].data(), static_cast<int>(block), type_, prev, 0, comm, &req);
                fold_decode(a[k % 2].data(), static_cast<std::size_t>(nt), in.data() + k * block, out.data() + k * block);
            }
            return;
        }
        // P_2 .. P_{p-1}: receive block k while block k - 1 goes on
        std::size_t nc = 0;
        for (std::size_t k = 0; k <= blocks; ++k) {
            MPI_Status st;
            if (k == 0) MPI_Recv(a[0].data(), static_cast<int>(block), type_, prev, 0, comm, &st);
            else if (k < blocks)
                MPI_Sendrecv(c.data(), static_cast<int>(nc), type_, next, 0, a[0].data(), static_cast<int>(block), type_, prev,
                             0, comm, &st);
            else MPI_Send(c.data(), static_cast<int>(nc), type_, next, 0, comm);
            if (k > 0) sent(nc);
            if (k == blocks) break;
            int nt = 0;
            MPI_Get_count(&st, type_, &nt);
            nc = fold_encode(a[0].data(), static_cast<std::size_t>(nt), in.data() + k * block, len(k), c.data());
        }
    }

private:
    MPI_Datatype type_;
};

} // namespace sparse_reduce::bench
