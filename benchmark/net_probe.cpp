// net_probe: what a network costs, before any reduce runs on it.
//
//   mpiexec -n P net_probe [--reps N] [--sizes B,B,...] [--gbit G]
//                          [--max-barrier-us U] [--max-line-ratio R]
//                          [--stream TOTAL]
//
// Rank 0 ping-pongs with rank P-1 (the farthest host on scripts/netbench.sh's
// bridge; every host is one hop from every other), then all ranks time
// MPI_Barrier. Medians over --reps after a warm-up; one-way time = half the
// round trip. With --gbit G each size also gets its line-rate time (bytes *
// 8 / G ns, wire overhead ignored) and the ratio measured / line rate.
// Every ping-pong's payload is checked (a pattern per size and repetition).
// With --stream TOTAL, rank 0 then streams TOTAL bytes to the peer in
// messages of each size, as one edge of a pipeline: sent from one array,
// two in flight; the peer posts two receives ahead into two buffers and
// checks every message of the warm-ups and the first of each timed
// repetition (stream_time): what the message size alone costs MPI.
// The checks (--max-barrier-us, --max-line-ratio for the largest size) make
// the exit status 1 when a figure is out of bound: scripts/netbench.sh's
// CTest uses them to catch a harness that adds latency of its own
// (doc/benchmarks.md, "A network of P hosts on one machine").
// Output: one line per figure, "net_probe: <what> <value>", then
// "net_probe: ok" or "net_probe: FAIL <why>".
//
// Plain MPI on purpose: it measures the transport, not the library.

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct options {
    int reps = 50;
    std::vector<std::size_t> sizes{8, 65536, 1 << 20};
    double gbit = 0;             // 0: no line-rate column
    double max_barrier_us = 0;   // 0: no check
    double max_line_ratio = 0;   // 0: no check
    std::size_t stream = 0;      // 0: no stream
};

std::vector<std::size_t> parse_sizes(const std::string& s)
{
    std::vector<std::size_t> out;
    for (std::size_t at = 0; at < s.size();) {
        const std::size_t comma = std::min(s.find(',', at), s.size());
        out.push_back(std::stoull(s.substr(at, comma - at)));
        at = comma + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
}

options parse(int argc, char** argv)
{
    options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const char* v = argv[i + 1];
        if (k == "--reps") o.reps = std::max(1, std::atoi(v));
        else if (k == "--sizes") o.sizes = parse_sizes(v);
        else if (k == "--gbit") o.gbit = std::atof(v);
        else if (k == "--max-barrier-us") o.max_barrier_us = std::atof(v);
        else if (k == "--max-line-ratio") o.max_line_ratio = std::atof(v);
        else if (k == "--stream") o.stream = std::stoull(v);
        else {
            std::fprintf(stderr, "net_probe: unknown option %s\n", k.c_str());
            std::exit(2);
        }
    }
    return o;
}

double median(std::vector<double> t)
{
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::uint8_t pattern(std::size_t i, int rep) { return static_cast<std::uint8_t>(i * 131 + static_cast<std::size_t>(rep) * 7 + 1); }

// Median one-way time of a ping-pong of `bytes` between ranks 0 and peer;
// false in *ok when a payload arrived wrong.
double ping_pong(std::size_t bytes, int reps, int peer, bool* ok)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<std::uint8_t> buf(std::max<std::size_t>(bytes, 1));
    const int count = static_cast<int>(bytes);
    std::vector<double> t;
    const int warmup = std::min(5, reps);
    for (int r = -warmup; r < reps; ++r) {
        if (rank == 0) {
            for (std::size_t i = 0; i < bytes; ++i) buf[i] = pattern(i, r);
            MPI_Barrier(MPI_COMM_WORLD);
            const double start = MPI_Wtime();
            MPI_Send(buf.data(), count, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (r >= 0) t.push_back((MPI_Wtime() - start) / 2);
        } else if (rank == peer) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Recv(buf.data(), count, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (std::size_t i = 0; i < bytes; ++i)
                if (buf[i] != pattern(i, r)) *ok = false;
            MPI_Send(buf.data(), count, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    return rank == 0 ? median(t) : 0;
}

// Median time for rank 0 to stream `total` bytes to peer in messages of
// `bytes` (two sends in flight, two receives posted ahead), until the peer
// has the last; false in *ok when a checked message arrived wrong. Every
// message of the warm-ups and the first of each timed repetition is
// checked: its slot poisoned before the receive is posted, its size, and
// its bytes, which differ by message and repetition (a pattern shifted by
// both), so a message missing or in the wrong slot shows.
double stream_time(std::size_t total, std::size_t bytes, int reps, int peer, bool* ok)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const std::size_t n = total / bytes;
    const int count = static_cast<int>(bytes);
    std::vector<std::uint8_t> data(rank == 0 ? n * bytes : 0), slots(rank == peer ? 2 * bytes : 0);
    const auto expected = [](std::size_t k, std::size_t i, int r) { return pattern(i + 3 * k + (i >> 8), r); };
    std::vector<double> t;
    for (int r = -std::min(2, reps); r < reps; ++r) {
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        const auto checked = [r](std::size_t k) { return r < 0 || k == 0; };
        const auto post = [&](std::size_t k) {
            std::uint8_t* slot = slots.data() + (k % 2) * bytes;
            if (checked(k)) std::fill(slot, slot + bytes, std::uint8_t{0xEE});
            MPI_Irecv(slot, count, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[k % 2]);
        };
        if (rank == 0)
            for (std::size_t k = 0; k < n; ++k)
                for (std::size_t i = 0; i < bytes; ++i) data[k * bytes + i] = expected(k, i, r);
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        if (rank == 0) {
            for (std::size_t k = 0; k < n; ++k) {
                MPI_Wait(&req[k % 2], MPI_STATUS_IGNORE);
                MPI_Isend(data.data() + k * bytes, count, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[k % 2]);
            }
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        } else if (rank == peer) {
            for (std::size_t k = 0; k < std::min<std::size_t>(n, 2); ++k) post(k);
            for (std::size_t k = 0; k < n; ++k) {
                const std::uint8_t* slot = slots.data() + (k % 2) * bytes;
                MPI_Status status;
                MPI_Wait(&req[k % 2], &status);
                if (checked(k)) { // the timed loop is otherwise MPI's alone
                    int got = -1;
                    MPI_Get_count(&status, MPI_BYTE, &got);
                    if (got != count) *ok = false;
                    for (std::size_t i = 0; i < bytes; ++i)
                        if (slot[i] != expected(k, i, r)) *ok = false;
                }
                if (k + 2 < n) post(k + 2);
            }
        }
        const double mine = rank == peer ? MPI_Wtime() - start : 0;
        double peer_time = 0;
        MPI_Allreduce(&mine, &peer_time, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0) t.push_back(peer_time);
    }
    return median(t);
}

// Median time of one MPI_Barrier, the slowest rank's.
double barrier_time(int reps)
{
    std::vector<double> t;
    for (int r = -std::min(5, reps); r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        double mine = MPI_Wtime() - start, slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0) t.push_back(slowest);
    }
    return median(t);
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const options o = parse(argc, argv);
    std::string failure;
    if (size < 2) failure = "needs at least 2 ranks";
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    if (rank == 0) std::printf("net_probe: ranks %d, rank 0 on %s, peer rank %d\n", size, host, size - 1);

    bool ok = true;
    double largest_ratio = 0;
    for (const std::size_t bytes : size < 2 ? std::vector<std::size_t>{} : o.sizes) {
        const double t = ping_pong(bytes, o.reps, size - 1, &ok);
        if (rank != 0) continue;
        std::printf("net_probe: one-way %zu B %.1f us", bytes, t * 1e6);
        if (o.gbit > 0) {
            const double line = static_cast<double>(bytes) * 8 / (o.gbit * 1e9);
            std::printf(" line-rate %.1f us ratio %.2f", line * 1e6, t / line);
            largest_ratio = t / line; // sizes ascend: the last is the largest
        }
        std::printf("\n");
    }
    for (const std::size_t bytes : size < 2 || !o.stream ? std::vector<std::size_t>{} : o.sizes) {
        if (bytes == 0 || bytes > o.stream) continue;
        const double t = stream_time(o.stream, bytes, o.reps, size - 1, &ok);
        if (rank == 0)
            std::printf("net_probe: stream %zu B in %zu messages of %zu B %.1f us\n", o.stream / bytes * bytes,
                        o.stream / bytes, bytes, t * 1e6);
    }
    int all_ok = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const double barrier = size < 2 ? 0 : barrier_time(o.reps);
    if (rank == 0) {
        std::printf("net_probe: barrier %.1f us\n", barrier * 1e6);
        if (!all_ok) failure = "a payload arrived corrupted";
        else if (o.max_barrier_us > 0 && barrier * 1e6 > o.max_barrier_us)
            failure = "barrier " + std::to_string(barrier * 1e6) + " us > " + std::to_string(o.max_barrier_us);
        else if (o.max_line_ratio > 0 && largest_ratio > o.max_line_ratio)
            failure = "largest message at " + std::to_string(largest_ratio) + "x its line-rate time > " +
                      std::to_string(o.max_line_ratio);
        if (failure.empty()) std::printf("net_probe: ok\n");
        else std::printf("net_probe: FAIL %s\n", failure.c_str());
        std::fflush(stdout);
    }
    int fail = failure.empty() ? 0 : 1;
    MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return fail;
}
