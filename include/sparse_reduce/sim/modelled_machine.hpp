#pragma once
// The simulator's modelled machine (detail; sim/simulator.hpp): P ranks'
// programs on clocks of their own, messages on links that serialise them,
// and, for a started call, each rank's computation between its start and
// its wait, during which its program moves only in the test() calls the
// computation makes:
//
//   rank r   start ─┬─ compute ─┬─ test ─┬─ compute ─┬─ test ─┬── ... ──┬─ wait ─ done
//                   │  (Δ)      │ (what  │  (Δ)      │        │         │ (what is
//                   │           │ came)  │           │        │         │  left)
//   link     ═══ transfers run whenever both ends have posted them ═══
//
// A test handles every event (message in, send done) that arrived by its
// time and what arrives while it runs, each followed by the program's step
// (its folds and encodings cost γ on the rank's clock and delay the
// computation); the next Δ of computation starts when the test ends. Small
// messages travel eagerly (computation::eager_bytes): a receive posted only
// at a test would otherwise hold each one until then. (A blocking call
// posts its receives as soon as it can, so there the simulator lets every
// message wait for its receive.)

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../model/cost.hpp"

namespace sparse_reduce {

/// The machine a simulation models: cost_model's α, β, γ (model/cost.hpp).
using network_model = cost_model;

/// The computation a started call hides behind (simulate_started_reduce):
/// every rank computes `seconds` between its start and its wait(), and
/// calls test() after every `test_every` seconds of it.
struct computation {
    double seconds = 0;         ///< Per rank, between start and wait(); >= 0.
    double test_every = 100e-6; ///< Seconds of computation between two test() calls; > 0.
    /// Messages of at most this many bytes travel when sent, and the
    /// receiver's MPI keeps them until its receive is posted, in a test
    /// (MPI's eager protocol; Open MPI's TCP limit); larger ones travel once
    /// the receive is posted.
    std::size_t eager_bytes = 65536;
};

namespace detail {

// A link's booked future. A transfer takes the earliest interval free on
// both its links: one that waits for a busy receiver does not hold its
// sender's link meanwhile, and later transfers may use the gap.
class link_calendar {
public:
    // Moves t past every booking overlapping [t, t + d); returns whether it moved.
    bool push_past(double& t, double d) const
    {
        bool moved = false;
        for (const auto& [a, b] : busy_)
            if (a < t + d && t < b) {
                t = b;
                moved = true;
            }
        return moved;
    }
    void book(double a, double b) { busy_.push_back({a, b}); }
    void forget_before(double t)
    {
        std::erase_if(busy_, [t](const std::pair<double, double>& x) { return x.second <= t; });
    }

private:
    std::vector<std::pair<double, double>> busy_;
};

inline double earliest_common_gap(link_calendar& x, link_calendar& y, double t, double d)
{
    for (;;) { // both calendars move t each round, until neither does
        const bool moved_x = x.push_past(t, d);
        const bool moved_y = y.push_past(t, d);
        if (!moved_x && !moved_y) return t;
    }
}

} // namespace detail

namespace detail {

// The modelled machine: drives every rank's program on its own clock,
// messages on the links of simulator.hpp's header comment.
template <class Program>
class modelled_machine {
public:
    using node_t = typename Program::node_t;

    modelled_machine(std::vector<std::unique_ptr<Program>>& programs, const network_model& net)
        : programs_(programs), net_(net), cpu_(programs.size(), 0), ranks_(programs.size()), link_(programs.size())
    {
    }

    // Starts rank r at clock start[r], in rank order, then handles events
    // until none is left; fails if a node is left unfinished. With `work`,
    // each rank then computes (the header comment): an event that comes
    // while it computes waits for its next test.
    void run(std::span<const double> start, const computation* work = nullptr)
    {
        test_every_ = work ? work->test_every : 0;
        eager_ = work != nullptr;
        eager_bytes_ = work ? work->eager_bytes : 0;
        for (std::size_t r = 0; r < programs_.size(); ++r) {
            cpu_[r] = start[r];
            step(static_cast<int>(r));
            ranks_[r] = {work ? work->seconds : 0, cpu_[r], cpu_[r]};
        }
        while (!events_.empty()) {
            event e = events_.top();
            events_.pop();
            if (const double at = handled_at(e.rank, e.time); at > e.time) {
                e.time = at; // at the rank's next test, in the order of arrival
                events_.push(e);
                continue;
            }
            now_ = e.time;
            auto& clock = cpu_[static_cast<std::size_t>(e.rank)];
            clock = std::max(clock, e.time);
            if (e.delivery) {
                critical_[e.node] = std::max(critical_[e.node], e.critical);
                e.node->on_message(e.child, e.bytes);
            } else {
                e.node->on_sent(e.buffer);
            }
            step(e.rank);
            auto& t = ranks_[static_cast<std::size_t>(e.rank)].test_end;
            t = std::max(t, clock); // a test runs on while it has work
        }
        for (auto& prog : programs_)
            for (auto& b : prog->bindings())
                if (!b.node->finished() || !b.node->idle()) fail("internal error: the simulation stalled");
    }

    // When rank r is done: its program's last work, or its computation's end.
    double clock(int r) const
    {
        const computing& c = ranks_[static_cast<std::size_t>(r)];
        return std::max(cpu_[static_cast<std::size_t>(r)], std::max(c.test_end, c.chunk_end) + c.left);
    }
    // Bytes on the longest chain of dependent transfers into n.
    std::size_t critical(const node_t* n) { return critical_[n]; }

private:
    // A rank's computation: what is left to start, the end of its piece
    // running or last run, and the end of its last test.
    struct computing {
        double left = 0, chunk_end = 0, test_end = 0;
    };

    // When rank r handles an event that arrives at t: at t while it tests
    // or waits, else at the end of the piece of computation running then
    // (its next test). Tests with nothing to handle take no time.
    double handled_at(int r, double t)
    {
        computing& c = ranks_[static_cast<std::size_t>(r)];
        for (;;) {
            if (t <= c.test_end) return t;
            if (c.chunk_end > c.test_end) {
                if (t <= c.chunk_end) return c.chunk_end;
                c.test_end = c.chunk_end; // a test found nothing
            }
            if (c.left <= 0) return t; // in wait()
            // whole pieces that end before t, each with an empty test: at once
            const double k = std::min(std::floor((t - c.test_end) / test_every_), std::floor(c.left / test_every_));
            if (k > 1) {
                c.test_end += (k - 1) * test_every_;
                c.left -= (k - 1) * test_every_;
            }
            const double d = std::min(test_every_, c.left);
            c.left -= d;
            c.chunk_end = c.test_end + d;
        }
    }

private:
    struct message {
        node_t* sender;
        int buffer;
        std::span<const std::byte> bytes;
        double ready;
        std::size_t critical;
        double arrived = -1;         // an eager message's arrival (none: not sent yet)
        std::vector<std::byte> kept; // and its bytes, as the receiver's MPI keeps them
    };
    struct receive {
        node_t* node;
        std::size_t child;
        std::span<std::byte> slot;
        double posted;
    };
    struct event {
        double time;
        std::size_t seq;
        int rank;
        node_t* node;
        bool delivery; // else: a send completed
        std::size_t child;
        int buffer;
        std::size_t bytes, critical;
        bool operator>(const event& o) const { return std::tie(time, seq) > std::tie(o.time, o.seq); }
    };
    using key = std::tuple<int, int, int>; // (from, to, tag)

    // A transfer of m from rank `from` to `to` in the earliest gap free on
    // both links from t; returns its end.
    double transfer(int from, int to, const message& m, double t)
    {
        auto& lf = link_[static_cast<std::size_t>(from)];
        auto& lt = link_[static_cast<std::size_t>(to)];
        lf.forget_before(now_);
        lt.forget_before(now_);
        const double d = net_.alpha + net_.beta * static_cast<double>(m.bytes.size());
        const double start = earliest_common_gap(lf, lt, t, d);
        lf.book(start, start + d);
        lt.book(start, start + d);
        return start + d;
    }

    // Pairs the posted sends and receives of one (from, to, tag). A message
    // travels once both are posted, and its send completes when it has;
    // with a computation, one of eager_bytes at most travels when it is sent
    // (its send done), and the receiver's MPI keeps it until the receive is
    // posted.
    void match(const key& k)
    {
        auto& s = sends_[k];
        auto& q = receives_[k];
        while (!s.empty() && !q.empty()) {
            const message m = std::move(s.front());
            const receive rv = q.front();
            s.pop_front();
            q.pop_front();
            const auto [from, to, tag] = k;
            const double in = m.arrived >= 0 ? std::max(m.arrived, rv.posted) : transfer(from, to, m, std::max(m.ready, rv.posted));
            std::memcpy(rv.slot.data(), m.arrived >= 0 ? m.kept.data() : m.bytes.data(), m.bytes.size());
            events_.push({in, seq_++, to, rv.node, true, rv.child, 0, m.bytes.size(), m.critical});
            if (m.arrived < 0) events_.push({in, seq_++, from, m.sender, false, 0, m.buffer, 0, 0});
        }
    }

    // A message posted: an eager one travels now.
    void post(const key& k, message m)
    {
        const auto [from, to, tag] = k;
        if (eager_ && m.bytes.size() <= eager_bytes_) {
            m.arrived = transfer(from, to, m, m.ready);
            m.kept.assign(m.bytes.begin(), m.bytes.end());
            events_.push({m.ready, seq_++, from, m.sender, false, 0, m.buffer, 0, 0});
        }
        sends_[k].push_back(std::move(m));
        match(k);
    }

    // Lets every node of a rank work at the rank's clock, then posts what it can.
    void step(int r)
    {
        auto& prog = *programs_[static_cast<std::size_t>(r)];
        const std::size_t dense_before = prog.dense_work(), sparse_before = prog.sparse_work();
        for (auto& b : prog.bindings()) b.node->progress();
        cpu_[static_cast<std::size_t>(r)] += net_.gamma_dense * static_cast<double>(prog.dense_work() - dense_before) +
                                             net_.gamma * static_cast<double>(prog.sparse_work() - sparse_before);
        const double now = cpu_[static_cast<std::size_t>(r)];
        for (auto& b : prog.bindings()) {
            node_t* n = b.node;
            for (std::size_t c = 0; c < n->child_count(); ++c)
                if (auto slot = n->receive_slot(c)) {
                    const key k{n->child_rank(c), r, b.recv_tag};
                    receives_[k].push_back({n, c, *slot, now});
                    match(k);
                }
            while (auto o = n->take_outgoing()) {
                const key k{r, b.send_to, b.send_tag};
                post(k, {n, o->buffer, o->bytes, now, critical_[n] + o->bytes.size(), -1, {}});
            }
        }
        // Blocked, with its receives posted: a node works ahead as the MPI
        // executor's does (all of it here, before the next event is handled).
        const std::size_t ahead_before = prog.dense_work();
        for (auto& b : prog.bindings())
            while (b.node->work_ahead()) {}
        cpu_[static_cast<std::size_t>(r)] += net_.gamma_dense * static_cast<double>(prog.dense_work() - ahead_before);
    }

    std::vector<std::unique_ptr<Program>>& programs_;
    const network_model& net_;
    std::map<key, std::deque<message>> sends_;
    std::map<key, std::deque<receive>> receives_;
    std::priority_queue<event, std::vector<event>, std::greater<>> events_;
    std::vector<double> cpu_;
    std::vector<computing> ranks_;
    double test_every_ = 0;
    bool eager_ = false; // a started call's: small messages travel when sent
    std::size_t eager_bytes_ = 0;
    std::vector<link_calendar> link_;
    double now_ = 0; // the event being handled
    std::map<const node_t*, std::size_t> critical_; // longest chain received so far
    std::size_t seq_ = 0;
};

} // namespace detail

} // namespace sparse_reduce
