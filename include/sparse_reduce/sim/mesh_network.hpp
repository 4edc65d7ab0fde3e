#pragma once
// A 2D mesh network simulator, and Chen and Lee's (n.d.) group-replicated accumulation
// run on it (doc/mesh_validation.md).
//
//   rows x cols PEs, PE r * cols + c at (r, c); links to the four neighbours,
//   around the edges too on a wrapped (torus) mesh:
//
//        (0,0) - (0,1) - (0,2)        a message moves along its row first
//          |       |       |          (or its column first), then the other
//        (1,0) - (1,1) - (1,2)        dimension: dimension-ordered routing;
//          |       |       |          on a torus each dimension the way its
//        (2,0) - (2,1) - (2,2)        signed offset says (callers take the
//                                     shorter one, or the seed's rule)
//
// A bi-directional link is two channels, one per direction; a
// uni-directional one is one channel both directions share (one direction
// at a time). A channel carries one packet at a time, first come first
// served: transfers that share a link serialise. Messages are cut into
// packets; switching is virtual cut-through (a packet's head goes on as soon
// as it has a channel, a blocked packet waits in the switch), so an
// uncontended message of size s takes s over any number of hops, as the
// seed's model assumes (it counts no per-hop latency), or store-and-forward
// (a packet goes on once it has wholly arrived: hops cost). Sizes are data
// times the time one datum takes over one link.
//
// simulate_round() runs one set of messages, all released at time 0, event
// by event (a priority queue of packet arrivals), and returns when the last
// packet arrives. Chen and Lee's algorithms are step-synchronous rings and an
// all-to-all; a ring step is one round, repeated.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <queue>
#include <span>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../model/group_replication.hpp"

namespace sparse_reduce::mesh {

// Virtual cut-through: a packet's head goes on as soon as it has the next
// channel. Store-and-forward: a packet goes on once all of it has arrived
// (then a message of s over h hops in k packets takes s (1 + (h - 1) / k)).
enum class switching { cut_through, store_and_forward };

struct network {
    int rows = 1, cols = 1;
    bool wrapped = false;
    bool bidirectional = true;
    switching mode = switching::cut_through;
    int size() const { return rows * cols; }
};

// From PE src, dr rows and dc columns away (signed: the direction taken),
// `size` in time units; along the row first, or the column first.
struct message {
    int src = 0, dr = 0, dc = 0;
    double size = 0;
    bool row_first = true;
};

namespace detail {

using sparse_reduce::detail::fail;

// The channels a message crosses, in order. Channel ids: bi-directional
// links 4 per PE (east, west, south, north out of it); uni-directional 2
// per PE (the link to its east and to its south neighbour, both ways).
inline void route_into(const network& n, const message& m, std::vector<std::int32_t>& out)
{
    int r = m.src / n.cols, c = m.src % n.cols;
    const auto along = [&](bool row) {
        const int d = row ? m.dc : m.dr, step = d > 0 ? 1 : -1, len = row ? n.cols : n.rows;
        for (int k = 0; k < std::abs(d); ++k) {
            int& pos = row ? c : r;
            const int next = pos + step;
            if (!n.wrapped && (next < 0 || next >= len)) fail("mesh: a route leaves a regular mesh");
            const int to = (next + len) % len;
            const int node = r * n.cols + c;
            std::int32_t id;
            if (n.bidirectional) id = node * 4 + (row ? (step > 0 ? 0 : 1) : (step > 0 ? 2 : 3));
            else if (step > 0) id = node * 2 + (row ? 0 : 1);
            else id = (row ? r * n.cols + to : to * n.cols + c) * 2 + (row ? 0 : 1); // the link from the lower side
            out.push_back(id);
            pos = to;
        }
    };
    along(m.row_first);
    along(!m.row_first);
}

inline int channels(const network& n) { return n.size() * (n.bidirectional ? 4 : 2); }

} // namespace detail

struct round_result {
    double makespan = 0;    // when the last packet arrives
    double busiest = 0;     // the most any channel carries: a lower bound of the makespan
    std::size_t events = 0; // packet hops simulated
};

// One round: every message released at 0, cut into `packets` packets.
inline round_result simulate_round(const network& n, std::span<const message> msgs, int packets = 4)
{
    if (n.rows < 1 || n.cols < 1) detail::fail("mesh: a network needs positive sides");
    if (packets < 1) detail::fail("mesh: a message needs at least one packet");
    // routes, flattened
    std::vector<std::int32_t> hops;
    std::vector<std::size_t> first(msgs.size() + 1, 0);
    for (std::size_t k = 0; k < msgs.size(); ++k) {
        if (msgs[k].src < 0 || msgs[k].src >= n.size()) detail::fail("mesh: a message from outside the mesh");
        if (msgs[k].size < 0) detail::fail("mesh: a message of negative size");
        detail::route_into(n, msgs[k], hops);
        first[k + 1] = hops.size();
    }
    round_result res;
    std::vector<double> free_at(static_cast<std::size_t>(detail::channels(n)), 0.0), load(free_at.size(), 0.0);
    struct event {
        double time;
        std::uint64_t seq; // first come first served among equal times: release order
        std::uint32_t msg, hop;
        double prev_end; // when the packet's tail leaves the previous channel
    };
    const auto later = [](const event& a, const event& b) { return a.time != b.time ? a.time > b.time : a.seq > b.seq; };
    std::priority_queue<event, std::vector<event>, decltype(later)> q(later);
    std::uint64_t seq = 0;
    for (int p = 0; p < packets; ++p) // packet p of every message, then p + 1: messages interleave
        for (std::size_t k = 0; k < msgs.size(); ++k)
            if (first[k + 1] > first[k] && msgs[k].size > 0)
                q.push({0.0, seq++, static_cast<std::uint32_t>(k), 0, 0.0});
    while (!q.empty()) {
        const event e = q.top();
        q.pop();
        ++res.events;
        const double len = msgs[e.msg].size / packets;
        const auto ch = static_cast<std::size_t>(hops[first[e.msg] + e.hop]);
        const double start = std::max(e.time, free_at[ch]);
        const double end = std::max(start + len, e.prev_end); // the tail cannot overtake itself
        free_at[ch] = end;
        load[ch] += len;
        const double next = n.mode == switching::cut_through ? start : end;
        if (first[e.msg] + e.hop + 1 < first[e.msg + 1]) q.push({next, seq++, e.msg, e.hop + 1, end});
        else res.makespan = std::max(res.makespan, end);
    }
    res.busiest = load.empty() ? 0 : *std::max_element(load.begin(), load.end());
    return res;
}

// ---- Chen and Lee's group-replicated accumulation, phase by phase ----
//
// M = 1: times are normalised by M, as the model's. One updating band
// (N_b cancels in the normalised totals). Modifications are computation,
// not network: the model's terms are added as they are.

struct replication_times {
    double update = 0, integrate = 0, broadcast = 0, modify = 0;
    double total() const { return update + integrate + broadcast + modify; }
};

namespace detail {

// Updating: every PE sends s to every other member of its group, half along
// the row first, half along the column first (the seed's 2D algorithm). A
// regular mesh's groups are disjoint submeshes, so one group is simulated;
// on a wrapped mesh each PE sends to the ⌊y/2⌋ PEs on its right and y - 1 -
// ⌊y/2⌋ on its left (rows likewise), the seed's rule that makes every group
// a wrapped one, which a torus of the group's shape reproduces; a packet
// exactly half way round goes half each way (Prop. 3.3's ties).
inline std::vector<message> update_messages(int x, int y, bool wrapped, double s)
{
    std::vector<message> out;
    const int lo_r = wrapped ? -(x - 1 - x / 2) : 0, lo_c = wrapped ? -(y - 1 - y / 2) : 0;
    for (int r = 0; r < x; ++r)
        for (int c = 0; c < y; ++c)
            for (int dr = lo_r; dr < lo_r + x; ++dr)
                for (int dc = lo_c; dc < lo_c + y; ++dc) {
                    const int rr = wrapped ? dr : dr - r, cc = wrapped ? dc : dc - c;
                    if (rr == 0 && cc == 0) continue;
                    const bool tie_r = wrapped && x % 2 == 0 && 2 * rr == x, tie_c = wrapped && y % 2 == 0 && 2 * cc == y;
                    const double part = s / 2 / ((tie_r ? 2 : 1) * (tie_c ? 2 : 1));
                    for (int fr : {1, -1})
                        for (int fc : {1, -1}) {
                            if ((fr < 0 && !tie_r) || (fc < 0 && !tie_c)) continue;
                            const int a = fr < 0 ? rr - x : rr, b = fc < 0 ? cc - y : cc;
                            out.push_back({r * y + c, a, b, part, true});
                            out.push_back({r * y + c, a, b, part, false});
                        }
                }
    return out;
}

// Rows and columns are separate channels, so the updating splits into a
// row phase (in every row, each PE sends x s to each other PE: the XY halves
// of its own x packets per column and the YX halves that came up its column)
// and a column phase (y s between any two PEs of a column). For groups too
// large to simulate message by message (more than `budget` packet hops) the
// two phases are simulated as these 1D all-to-alls and the later one taken;
// the test checks this against the whole simulation where both run.
inline double update_time(int x, int y, bool wrapped, bool bi, switching mode, double s, int packets,
                          double budget = 4e6)
{
    const double pairs = static_cast<double>(x) * y * x * y;
    if (pairs * (x + y) * packets <= budget)
        return simulate_round(network{x, y, wrapped, bi, mode}, update_messages(x, y, wrapped, s), packets).makespan;
    return std::max(
        simulate_round(network{1, y, wrapped, bi, mode}, update_messages(1, y, wrapped, x * s), packets).makespan,
        simulate_round(network{x, 1, wrapped, bi, mode}, update_messages(x, 1, wrapped, y * s), packets).makespan);
}

// A cycle through every node of an a x b grid (visiting order), as
// neighbour steps where the grid allows (a or b even), else a snake whose
// closing step is long.
inline std::vector<std::pair<int, int>> grid_cycle(int a, int b)
{
    std::vector<std::pair<int, int>> v;
    if (a == 1 || b == 1) {
        for (int i = 0; i < a; ++i)
            for (int j = 0; j < b; ++j) v.push_back({i, j});
        return v;
    }
    const bool rows_even = a % 2 == 0;
    const int A = rows_even ? a : b, B = rows_even ? b : a; // A even (or both odd)
    std::vector<std::pair<int, int>> w;
    for (int i = 0; i < A; ++i) // columns 1 .. B-1 snaking, then back up column 0
        for (int k = 0; k < B - 1; ++k) w.push_back({i, i % 2 == 0 ? 1 + k : B - 1 - k});
    for (int i = A - 1; i >= 0; --i) w.push_back({i, 0});
    for (auto [i, j] : w) v.push_back(rows_even ? std::pair{i, j} : std::pair{j, i});
    return v;
}

// The signed offset from u to v along a dimension of length len.
inline int offset(int from, int to, int len, bool wrapped)
{
    int d = to - from;
    if (wrapped) {
        d = ((d % len) + len) % len;
        if (d > len / 2) d -= len;
    }
    return d;
}

// One step of a ring algorithm on every ring at once: every PE sends
// `piece` to its successor, half each way round (the seed's rings use both
// directions; a uni-directional link then carries both halves in turn).
// rings: for every member, the ring's PEs in order.
inline std::vector<message> ring_step(const network& n, const std::vector<std::vector<int>>& rings, double piece)
{
    std::vector<message> out;
    for (const auto& ring : rings) {
        const std::size_t m = ring.size();
        if (m < 2) continue;
        for (std::size_t k = 0; k < m; ++k) {
            const int u = ring[k], v = ring[(k + 1) % m];
            const int ur = u / n.cols, uc = u % n.cols, vr = v / n.cols, vc = v % n.cols;
            const int dr = offset(ur, vr, n.rows, n.wrapped), dc = offset(uc, vc, n.cols, n.wrapped);
            out.push_back({u, dr, dc, piece / 2, true});
            out.push_back({v, -dr, -dc, piece / 2, true});
        }
    }
    return out;
}

// A stage of concurrent ring steps: `steps_a` steps of piece pa on rings ra
// beside `steps_b` of piece pb on rings rb; the time of the steps they share
// is simulated with both sets of messages.
inline double ring_stage(const network& mesh, const std::vector<std::vector<int>>& ra, int steps_a, double pa,
                         const std::vector<std::vector<int>>& rb, int steps_b, double pb, int packets)
{
    const int both = std::min(steps_a, steps_b);
    auto msgs = ring_step(mesh, ra, pa);
    const auto mb = ring_step(mesh, rb, pb);
    double time = 0;
    if (both > 0) {
        auto m2 = msgs;
        m2.insert(m2.end(), mb.begin(), mb.end());
        time += both * simulate_round(mesh, m2, packets).makespan;
    }
    if (steps_a > both) time += (steps_a - both) * simulate_round(mesh, msgs, packets).makespan;
    if (steps_b > both) time += (steps_b - both) * simulate_round(mesh, mb, packets).makespan;
    return time;
}

// Integration and broadcasting on an open mesh: integration is a ring
// through the corresponding PEs of all groups (Fig. 3), reduce-scatter:
// n_g - 1 steps of M / N^2 (each member's M / (x y) in n_g pieces);
// broadcasting an allgather of the N^2 pieces round one cycle of all PEs.
inline void open_mesh_phases(const network& mesh, int x, int y, int packets, replication_times& t)
{
    const int N = mesh.rows;
    const double n2 = static_cast<double>(N) * N;
    const int nr = N / x, nc = N / y; // groups per column and per row
    const auto pe = [&](int i, int j, int a, int b) { return (i + a * x) * N + (j + b * y); };
    const auto cyc = grid_cycle(nr, nc);
    std::vector<std::vector<int>> rings;
    for (int i = 0; i < x; ++i)
        for (int j = 0; j < y; ++j) {
            rings.emplace_back();
            for (auto [a, b] : cyc) rings.back().push_back(pe(i, j, a, b));
        }
    const double ng = static_cast<double>(nr) * nc;
    if (ng > 1) t.integrate = (ng - 1) * simulate_round(mesh, ring_step(mesh, rings, 1 / n2), packets).makespan;
    std::vector<std::vector<int>> all(1);
    for (auto [r, c] : grid_cycle(N, N)) all[0].push_back(r * N + c);
    if (N > 1) t.broadcast = (n2 - 1) * simulate_round(mesh, ring_step(mesh, all, 1 / n2), packets).makespan;
}

// Integration and broadcasting on a wrapped mesh. Integration (Eq. 2): part
// s1 over the column rings, then the row rings; part s2 the other way; both
// at once, stage by stage. Broadcasting: half along the rows then the
// columns, half the other way, each an allgather round rings of N (one hop
// apart).
inline void wrapped_mesh_phases(const network& mesh, int x, int y, int packets, replication_times& t)
{
    const int N = mesh.rows;
    const double n2 = static_cast<double>(N) * N;
    const int nr = N / x, nc = N / y; // groups per column and per row
    const auto pe = [&](int i, int j, int a, int b) { return (i + a * x) * N + (j + b * y); };
    const double s1 = replication::wrapped_split(x, y, N), s2 = 1 - s1, share = 1 / (static_cast<double>(x) * y);
    std::vector<std::vector<int>> col_rings, row_rings;
    for (int i = 0; i < x; ++i)
        for (int j = 0; j < y; ++j) {
            for (int b = 0; b < nc; ++b) {
                col_rings.emplace_back();
                for (int a = 0; a < nr; ++a) col_rings.back().push_back(pe(i, j, a, b));
            }
            for (int a = 0; a < nr; ++a) {
                row_rings.emplace_back();
                for (int b = 0; b < nc; ++b) row_rings.back().push_back(pe(i, j, a, b));
            }
        }
    t.integrate = ring_stage(mesh, col_rings, nr - 1, s1 * share / nr, row_rings, nc - 1, s2 * share / nc, packets) +
                  ring_stage(mesh, row_rings, nc - 1, s1 * share / (static_cast<double>(nr) * nc), col_rings, nr - 1,
                             s2 * share / (static_cast<double>(nr) * nc), packets);
    std::vector<std::vector<int>> rows(static_cast<std::size_t>(N)), cols(static_cast<std::size_t>(N));
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) {
            rows[static_cast<std::size_t>(r)].push_back(r * N + c);
            cols[static_cast<std::size_t>(c)].push_back(r * N + c);
        }
    t.broadcast = ring_stage(mesh, rows, N - 1, 0.5 / n2, cols, N - 1, 0.5 / n2, packets) +
                  ring_stage(mesh, cols, N - 1, 0.5 / N, rows, N - 1, 0.5 / N, packets);
}

} // namespace detail

// Chen and Lee's pattern for x * y groups (y >= x, both dividing N) on an N x N
// mesh of the given system, with the model's N_a, T_x, T_m (p.N is N).
// Updating messages go as one packet each under cut-through (the many
// small messages interleave anyway), as `packets` under store-and-forward.
inline replication_times simulate_group_replication(replication::mesh_system sys, int x, int y,
                                                    const replication::params& p,
                                                    switching mode = switching::cut_through, int packets = 4)
{
    using namespace detail;
    replication::check_group(x, y, p.N);
    if (p.N % x != 0 || p.N % y != 0) fail("mesh: groups must tile the mesh");
    const int N = p.N;
    const bool wrapped = replication::wrapped(sys), bi = replication::links_of(sys) == replication::link::bi;
    const double n2 = static_cast<double>(N) * N;
    replication_times t;

    // updating: packet s = N_a / (x y) per destination, T_x per datum and hop
    t.update = update_time(x, y, wrapped, bi, mode, p.N_a * p.T_x / (static_cast<double>(x) * y),
                           mode == switching::cut_through ? 1 : packets);

    const network mesh{N, N, wrapped, bi, mode};
    if (!wrapped) open_mesh_phases(mesh, x, y, packets, t);
    else wrapped_mesh_phases(mesh, x, y, packets, t);
    t.modify = p.N_a * p.T_m + (1 / (static_cast<double>(x) * y) - 1 / n2) * p.T_m;
    return t;
}

} // namespace sparse_reduce::mesh
