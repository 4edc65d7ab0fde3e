#pragma once
/** @file
 optimal_binary_tree, the binary tree of least modelled completion time. Include `<sparse_reduce/sparse_reduce.hpp>`.

 optimal_binary: the binary reduction tree that minimises the modelled
 completion time at the root, for the given per-rank entry counts (one small
 allgather of nnz) under the α-β-γ model of model/cost.hpp:

 @verbatim
   T(v) = [receive the children's partial results, one at a time, in order
           of readiness: each costs alpha + beta * bytes(merged entries)]
          + gamma * (n_v + entries received)
   cost = T(top) + (a forward of the result to the root when top != root)
 @endverbatim

 Every node has at most two children and holds its own vector too.

 Alphabetic (non-commutative operations): every subtree is a contiguous
 range of ranks, folded as left ⊗ own ⊗ right. The interval dynamic program
 @verbatim
   T(i, j) = min over m in [i, j] of node(m; T(i, m-1), T(m+1, j))
 @endverbatim
 is exact: merged sizes depend only on the interval, and a node's time only
 grows with its children's, so optimal subtrees compose. The top may be any
 rank; the forward to the root is part of the cost. Exact up to
 exact_limit = 256 ranks (O(P^3)). Above, the grid program: the ranks are cut
 into 128 blocks, the exact program runs inside each block, and an interval
 spanning blocks is rooted at a block boundary (O(blocks^3), P = 4096 in
 about 30 ms); doc/trees.md reports its distance from the exact program.

 Free (commutative operations): any binary tree over the ranks, rooted at
 the root. Exact dynamic program over subsets for P <= 10 (O(3^P P));
 above, the alphabetic program (exact, or the grid) over the other ranks
 sorted by entry count, the root joining the best split: optimal among
 trees whose subtrees are contiguous in that order.

 @verbatim
   e.g. nnz = 9 1 1 1 1 1 1 1 (rank 0 heavy, root 0, commutative):
   the heavy rank keeps its data and receives the light ranks' merged
   results late, instead of sending its large vector anywhere.
 @endverbatim
*/

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "../model/cost.hpp"
#include "tree.hpp"

namespace sparse_reduce {

/// The modelled completion time of any tree under model m (used by the
/// builder's tests, and by selection); nnz[r] = rank r's entries.
template <class Lazy = void>
double modelled_completion_time(const tree& t, std::span<const double> nnz, double dimension,
                                       const cost_model& m)
{
    const auto p = static_cast<std::size_t>(t.size);
    std::vector<double> ready(p, 0), entries(p, 0);
    // children before parents: process ranks by decreasing depth
    std::vector<int> order(p), depth(p, 0);
    for (std::size_t r = 0; r < p; ++r) {
        for (int x = static_cast<int>(r); t.parent[static_cast<std::size_t>(x)] >= 0; x = t.parent[static_cast<std::size_t>(x)])
            ++depth[r];
        order[r] = static_cast<int>(r);
    }
    std::sort(order.begin(), order.end(), [&](int a, int b) { return depth[static_cast<std::size_t>(a)] > depth[static_cast<std::size_t>(b)]; });
    std::vector<std::pair<double, double>> arrivals;
    std::vector<double> sizes;
    for (int v : order) {
        const auto& ch = t.children[static_cast<std::size_t>(v)];
        arrivals.clear();
        sizes.assign(1, nnz[static_cast<std::size_t>(v)]);
        double received = 0;
        for (int c : ch) {
            const auto cs = static_cast<std::size_t>(c);
            arrivals.push_back({ready[cs], m.message_time(entries[cs], dimension)});
            received += entries[cs];
            sizes.push_back(entries[cs]);
        }
        std::sort(arrivals.begin(), arrivals.end());
        double clock = 0;
        for (const auto& [r, x] : arrivals) clock = std::max(clock, r) + x;
        const auto vs = static_cast<std::size_t>(v);
        ready[vs] = clock + m.gamma * (nnz[vs] + received);
        // merged entries of the subtree: the union over its ranks
        std::vector<double> members;
        std::vector<int> stack{v};
        while (!stack.empty()) {
            const int x = stack.back();
            stack.pop_back();
            members.push_back(nnz[static_cast<std::size_t>(x)]);
            for (int c : t.children[static_cast<std::size_t>(x)]) stack.push_back(c);
        }
        entries[vs] = merged_entries(members, dimension, m.merge);
    }
    double total = ready[static_cast<std::size_t>(t.top)];
    if (t.top != t.destination) total += m.message_time(entries[static_cast<std::size_t>(t.top)], dimension);
    return total;
}

namespace detail {

struct optimal_result {
    tree t;
    double cost;
};

// Merged entries of contiguous ranges [i, j] of a sequence, in O(1) each.
template <class Lazy = void>
class range_entries {
public:
    range_entries(std::span<const double> nnz, double dimension, merge_model model)
        : dim_(dimension), model_(model), prefix_(nnz.size() + 1, 0), full_(nnz.size() + 1, 0)
    {
        for (std::size_t k = 0; k < nnz.size(); ++k) {
            const bool full = nnz[k] >= dimension; // a dense rank fills every range it is in
            full_[k + 1] = full_[k] + full;
            if (model == merge_model::disjoint) prefix_[k + 1] = prefix_[k] + nnz[k];
            else prefix_[k + 1] = prefix_[k] + (full ? 0 : std::log1p(-nnz[k] / dimension));
        }
    }
    double operator()(std::size_t i, std::size_t j) const // inclusive; empty when j < i
    {
        if (j + 1 <= i || dim_ <= 0) return 0;
        if (full_[j + 1] != full_[i]) return dim_;
        const double d = prefix_[j + 1] - prefix_[i];
        if (model_ == merge_model::disjoint) return std::min(d, dim_);
        return dim_ * -std::expm1(d);
    }

private:
    double dim_;
    merge_model model_;
    std::vector<double> prefix_;
    std::vector<std::size_t> full_;
};

// The node time of m with children ranges [i, m-1] and [m+1, j].
struct node_cost {
    const cost_model& m;
    double dimension;
    double operator()(double own, double t_left, double s_left, bool has_left, double t_right, double s_right,
                      bool has_right) const
    {
        double clock = 0;
        if (has_left && has_right)
            clock = receive_two(t_left, m.message_time(s_left, dimension), t_right, m.message_time(s_right, dimension));
        else if (has_left) clock = t_left + m.message_time(s_left, dimension);
        else if (has_right) clock = t_right + m.message_time(s_right, dimension);
        return clock + m.gamma * (own + (has_left ? s_left : 0) + (has_right ? s_right : 0));
    }
};

// Alphabetic DP over a sequence of entry counts w: T(i, j) and the best
// root R(i, j) of every interval, then a tree over sequence positions.
template <class Lazy = void>
class interval_dp {
public:
    interval_dp(std::span<const double> w, double dimension, const cost_model& m, std::size_t exact_limit)
        : w_(w), p_(w.size()), S_(w, dimension, m.merge), node_{m, dimension}, T_(p_ * p_, 0), R_(p_ * p_, 0)
    {
        const bool exact = p_ <= exact_limit;
        for (std::size_t len = 1; len <= p_; ++len)
            for (std::size_t i = 0; i + len <= p_; ++i) {
                const std::size_t j = i + len - 1;
                std::size_t lo = i, hi = j;
                if (!exact && len >= 3) { // Knuth's window
                    lo = R_[at(i, len - 1)];
                    hi = R_[at(i + 1, len - 1)];
                }
                double best = std::numeric_limits<double>::infinity();
                std::size_t arg = lo;
                for (std::size_t k = lo; k <= hi; ++k) {
                    const double c = root_at(k, i, j);
                    if (c < best) best = c, arg = k;
                }
                T_[at(i, len)] = best;
                R_[at(i, len)] = static_cast<std::uint32_t>(arg);
            }
    }

    // Node time of a node with weight `own` over children [i, k-1] and [k', j]
    // (either may be empty: pass j < i).
    double join(double own, std::size_t li, std::size_t lj, std::size_t ri, std::size_t rj) const
    {
        const bool hl = lj + 1 > li && li < p_ && lj < p_, hr = rj + 1 > ri && ri < p_ && rj < p_;
        return node_(own, hl ? T(li, lj) : 0, hl ? S_(li, lj) : 0, hl, hr ? T(ri, rj) : 0, hr ? S_(ri, rj) : 0, hr);
    }
    double root_at(std::size_t k, std::size_t i, std::size_t j) const
    {
        return join(w_[k], i, k == 0 ? p_ : k - 1, k + 1, j);
    }
    double T(std::size_t i, std::size_t j) const { return T_[at(i, j - i + 1)]; }
    std::size_t R(std::size_t i, std::size_t j) const { return R_[at(i, j - i + 1)]; }
    double entries(std::size_t i, std::size_t j) const { return S_(i, j); }

    // Parent/children over sequence positions for the interval [i, j] rooted
    // at k, hung below `up` (-1: none).
    void build(std::size_t i, std::size_t j, std::size_t k, int up, std::vector<int>& parent,
               std::vector<std::vector<int>>& children, std::vector<int>& self_position) const
    {
        struct item {
            std::size_t i, j, k;
            int up;
        };
        std::vector<item> stack{{i, j, k, up}};
        while (!stack.empty()) {
            const item it = stack.back();
            stack.pop_back();
            parent[it.k] = it.up;
            if (it.up >= 0) children[static_cast<std::size_t>(it.up)].push_back(static_cast<int>(it.k));
            if (it.k > it.i) {
                self_position[it.k] = 1;
                stack.push_back({it.i, it.k - 1, R(it.i, it.k - 1), static_cast<int>(it.k)});
            }
            if (it.k < it.j) stack.push_back({it.k + 1, it.j, R(it.k + 1, it.j), static_cast<int>(it.k)});
        }
    }

private:
    std::size_t at(std::size_t i, std::size_t len) const { return (len - 1) * p_ + i; }

    std::span<const double> w_;
    std::size_t p_;
    range_entries<Lazy> S_;
    node_cost node_;
    std::vector<double> T_;
    std::vector<std::uint32_t> R_;
};

// The interval program restricted for large sequences: the sequence is cut
// into blocks at grid positions G_0 = 0 < G_1 < ... < G_g = q (the root's
// position among them). Inside one block the exact program runs; an
// interval spanning several blocks, [G_a + d, G_b) with d in {0, 1}, is
// rooted at a grid position G_m (a < m < b), its children being [G_a + d,
// G_m) and [G_m + 1, G_b): states (a, b, d), O(g^3) in all.
template <class Lazy = void>
class grid_dp {
public:
    grid_dp(std::span<const double> w, double dimension, const cost_model& m, std::vector<std::size_t> grid)
        : w_(w), grid_(std::move(grid)), g_(grid_.size() - 1), S_(w, dimension, m.merge), node_{m, dimension},
          T_(2 * (g_ + 1) * (g_ + 1), std::numeric_limits<double>::infinity()), M_(T_.size(), 0)
    {
        for (std::size_t a = 0; a < g_; ++a) // the exact program inside every block
            blocks_.emplace_back(w_.subspan(grid_[a], grid_[a + 1] - grid_[a]), dimension, m,
                                 std::numeric_limits<std::size_t>::max());
        for (std::size_t span = 1; span <= g_; ++span)
            for (std::size_t a = 0; a + span <= g_; ++a)
                for (std::size_t d = 0; d < 2; ++d) {
                    const std::size_t b = a + span, lo = grid_[a] + d, hi = grid_[b];
                    if (lo >= hi) continue; // empty
                    double best = std::numeric_limits<double>::infinity();
                    std::size_t arg = 0;
                    if (span == 1) {
                        best = blocks_[a].T(d, hi - grid_[a] - 1);
                    } else {
                        for (std::size_t mid = a + 1; mid < b; ++mid) {
                            const std::size_t r = grid_[mid];
                            if (r < lo) continue;
                            const double c = join_states(w_[r], a, mid, d, mid, b, 1);
                            if (c < best) best = c, arg = mid;
                        }
                    }
                    T_[at(a, b, d)] = best;
                    M_[at(a, b, d)] = static_cast<std::uint32_t>(arg);
                }
    }

    std::size_t grid(std::size_t k) const { return grid_[k]; }
    std::size_t blocks() const { return g_; }
    double entries(std::size_t i, std::size_t j) const { return S_(i, j); }

    double T(std::size_t a, std::size_t b, std::size_t d) const { return T_[at(a, b, d)]; }

    // A node of weight own over the states (la, lb, ld) and (ra, rb, rd);
    // a state with lb == la (or an empty range) is no child.
    double join_states(double own, std::size_t la, std::size_t lb, std::size_t ld, std::size_t ra, std::size_t rb,
                       std::size_t rd) const
    {
        const std::size_t li = grid_[la] + ld, lh = grid_[lb], ri = grid_[ra] + rd, rh = grid_[rb];
        const bool hl = lb > la && li < lh, hr = rb > ra && ri < rh;
        return node_(own, hl ? T_[at(la, lb, ld)] : 0, hl ? S_(li, lh - 1) : 0, hl, hr ? T_[at(ra, rb, rd)] : 0,
                     hr ? S_(ri, rh - 1) : 0, hr);
    }

    // Hangs the tree of state (a, b, d) below `up` (-1: none); returns its root.
    int build(std::size_t a, std::size_t b, std::size_t d, int up, std::vector<int>& parent,
              std::vector<std::vector<int>>& children, std::vector<int>& self_position) const
    {
        const std::size_t lo = grid_[a] + d, hi = grid_[b];
        if (b == a + 1) { // inside a block: the block program's tree, shifted
            const auto& blk = blocks_[a];
            const std::size_t base = grid_[a], n = hi - base;
            std::vector<int> p(n, -2), sp(n, 0);
            std::vector<std::vector<int>> ch(n);
            const std::size_t root = blk.R(d, n - 1);
            blk.build(d, n - 1, root, -1, p, ch, sp);
            for (std::size_t k = d; k < n; ++k) {
                const std::size_t r = base + k;
                parent[r] = p[k] < 0 ? up : static_cast<int>(base) + p[k];
                for (int c : ch[k]) children[r].push_back(static_cast<int>(base) + c);
                self_position[r] = sp[k];
            }
            if (up >= 0) children[static_cast<std::size_t>(up)].push_back(static_cast<int>(base + root));
            return static_cast<int>(base + root);
        }
        const std::size_t mid = M_[at(a, b, d)], r = grid_[mid];
        parent[r] = up;
        if (up >= 0) children[static_cast<std::size_t>(up)].push_back(static_cast<int>(r));
        if (lo < r) {
            build(a, mid, d, static_cast<int>(r), parent, children, self_position);
            self_position[r] = 1;
        }
        if (r + 1 < hi) build(mid, b, 1, static_cast<int>(r), parent, children, self_position);
        return static_cast<int>(r);
    }

private:
    std::size_t at(std::size_t a, std::size_t b, std::size_t d) const { return (a * (g_ + 1) + b) * 2 + d; }

    std::span<const double> w_;
    std::vector<std::size_t> grid_;
    std::size_t g_;
    range_entries<Lazy> S_;
    node_cost node_;
    std::vector<double> T_;
    std::vector<std::uint32_t> M_;
    std::vector<interval_dp<Lazy>> blocks_;
};

// Grid positions: g near-equal blocks of [0, q), plus the extra positions.
template <class Lazy = void>
std::vector<std::size_t> make_grid(std::size_t q, std::size_t g, std::initializer_list<std::size_t> extra)
{
    std::vector<std::size_t> grid;
    for (std::size_t k = 0; k <= g; ++k) grid.push_back(q * k / g);
    for (std::size_t e : extra)
        if (e < q) grid.push_back(e);
    std::sort(grid.begin(), grid.end());
    grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
    return grid;
}

inline tree empty_tree(int p)
{
    tree t;
    t.size = p;
    t.parent.assign(static_cast<std::size_t>(p), -1);
    t.children.assign(static_cast<std::size_t>(p), {});
    t.self_position.assign(static_cast<std::size_t>(p), 0);
    return t;
}

// Children were appended in build order; fold order is left, then right.
template <class Lazy = void>
void sort_children_by_position(tree& t, const std::vector<int>& position)
{
    for (auto& c : t.children)
        std::sort(c.begin(), c.end(), [&](int a, int b) {
            return position[static_cast<std::size_t>(a)] < position[static_cast<std::size_t>(b)];
        });
}

// The subset program's limit: O(3^P P) is about 0.6 M steps at P = 10.
inline constexpr int free_exact_max_ranks = 10;

// Exact DP over subsets (commutative, P <= free_exact_max_ranks): best tree on `set` rooted at v.
template <class Lazy = void>
optimal_result free_exact(std::span<const double> nnz, double dimension, const cost_model& m, int root)
{
    const int p = static_cast<int>(nnz.size());
    const std::uint32_t full = (1u << p) - 1;
    std::vector<double> S(full + 1, 0), T(full + 1, std::numeric_limits<double>::infinity());
    std::vector<std::uint32_t> left(full + 1, 0);
    std::vector<std::uint8_t> top(full + 1, 0);
    std::vector<double> members;
    for (std::uint32_t s = 1; s <= full; ++s) {
        members.clear();
        for (int r = 0; r < p; ++r)
            if (s >> r & 1) members.push_back(nnz[static_cast<std::size_t>(r)]);
        S[s] = merged_entries(members, dimension, m.merge);
    }
    const node_cost node{m, dimension};
    // T[s] = best subtree over set s (any top in s); sets in increasing size order = increasing value works
    for (std::uint32_t s = 1; s <= full; ++s)
        for (int v = 0; v < p; ++v) {
            if (!(s >> v & 1)) continue;
            const std::uint32_t rest = s & ~(1u << v);
            // left ranges over submasks of rest with left <= right to skip mirror images
            for (std::uint32_t l = rest;; l = (l - 1) & rest) {
                const std::uint32_t r = rest & ~l;
                if (l <= r) {
                    const double c = node(nnz[static_cast<std::size_t>(v)], l ? T[l] : 0, S[l], l != 0, r ? T[r] : 0, S[r], r != 0);
                    if (c < T[s]) T[s] = c, left[s] = l, top[s] = static_cast<std::uint8_t>(v);
                }
                if (l == 0) break;
            }
        }
    // the whole set must be topped by root: recompute its best split
    double best = std::numeric_limits<double>::infinity();
    std::uint32_t best_left = 0;
    const std::uint32_t rest = full & ~(1u << root);
    for (std::uint32_t l = rest;; l = (l - 1) & rest) {
        const std::uint32_t r = rest & ~l;
        const double c = node(nnz[static_cast<std::size_t>(root)], l ? T[l] : 0, S[l], l != 0, r ? T[r] : 0, S[r], r != 0);
        if (c < best) best = c, best_left = l;
        if (l == 0) break;
    }
    optimal_result out{empty_tree(p), best};
    tree& t = out.t;
    struct item {
        std::uint32_t set;
        int v, up;
        std::uint32_t l;
    };
    std::vector<item> stack{{full, root, -1, best_left}};
    while (!stack.empty()) {
        const item it = stack.back();
        stack.pop_back();
        t.parent[static_cast<std::size_t>(it.v)] = it.up;
        const std::uint32_t rest_set = it.set & ~(1u << it.v);
        for (std::uint32_t part : {it.l, rest_set & ~it.l})
            if (part) {
                stack.push_back({part, top[part], it.v, left[part]});
                t.children[static_cast<std::size_t>(it.v)].push_back(top[part]);
            }
    }
    t.top = t.destination = root;
    return out;
}

} // namespace detail

/// How optimal_binary_tree searches.
struct optimal_binary_options {
    cost_model model{};            ///< The model minimised.
    std::size_t exact_limit = 256; ///< Exact interval program up to this many ranks.
    std::size_t grid_blocks = 128; ///< Above: blocks of the grid program.
};

namespace detail {

// The commutative tree above ten ranks: the others sorted by decreasing entry
// count; the root joins two ranges of that order, split where it is cheapest.
template <class Lazy = void>
optimal_result optimal_commutative(std::span<const double> nnz, double dimension, int root,
                                          const optimal_binary_options& o)
{
    const int p = static_cast<int>(nnz.size());
    optimal_result out{empty_tree(p), 0};
    std::vector<int> order;
    for (int r = 0; r < p; ++r)
        if (r != root) order.push_back(r);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return nnz[static_cast<std::size_t>(a)] > nnz[static_cast<std::size_t>(b)];
    });
    const std::size_t q = order.size();
    std::vector<double> w(q);
    for (std::size_t k = 0; k < q; ++k) w[k] = nnz[static_cast<std::size_t>(order[k])];
    std::vector<int> parent(q, -1), self(q, 0), position(static_cast<std::size_t>(p), 0);
    std::vector<std::vector<int>> children(q);
    double best = std::numeric_limits<double>::infinity();
    const double own = nnz[static_cast<std::size_t>(root)];
    if (q <= o.exact_limit) {
        const interval_dp<Lazy> dp(w, dimension, o.model, o.exact_limit);
        std::size_t split = 0; // left = [0, split), right = [split, q)
        for (std::size_t k = 0; k <= q; ++k) {
            const double c = dp.join(own, 0, k == 0 ? q : k - 1, k, q == k ? q : q - 1);
            if (c < best) best = c, split = k;
        }
        if (split > 0) dp.build(0, split - 1, dp.R(0, split - 1), -1, parent, children, self);
        if (split < q) dp.build(split, q - 1, dp.R(split, q - 1), -1, parent, children, self);
    } else {
        const grid_dp<Lazy> dp(w, dimension, o.model, make_grid<Lazy>(q, o.grid_blocks, {}));
        const std::size_t g = dp.blocks();
        std::size_t split = 0; // left = blocks [0, split), right = blocks [split, g)
        for (std::size_t k = 0; k <= g; ++k) {
            const double c = dp.join_states(own, 0, k, 0, k, g, 0);
            if (c < best) best = c, split = k;
        }
        if (split > 0) dp.build(0, split, 0, -1, parent, children, self);
        if (split < g) dp.build(split, g, 0, -1, parent, children, self);
    }
    // parent -1 in the sequence means: a child of the root
    tree& t = out.t;
    for (std::size_t k = 0; k < q; ++k) {
        const auto r = static_cast<std::size_t>(order[k]);
        t.parent[r] = parent[k] < 0 ? root : order[static_cast<std::size_t>(parent[k])];
        if (parent[k] < 0) t.children[static_cast<std::size_t>(root)].push_back(order[k]);
        for (int c : children[k]) t.children[r].push_back(order[static_cast<std::size_t>(c)]);
        t.self_position[r] = self[k];
        position[r] = static_cast<int>(k);
    }
    sort_children_by_position<Lazy>(t, position);
    t.top = t.destination = root;
    out.cost = best;
    return out;
}

// The alphabetic (order-preserving) tree: any top; a top other than the root
// forwards the result.
template <class Lazy = void>
optimal_result optimal_alphabetic(std::span<const double> nnz, double dimension, int root,
                                         const optimal_binary_options& o)
{
    optimal_result out{empty_tree(static_cast<int>(nnz.size())), 0};
    const std::size_t q = nnz.size();
    double best = std::numeric_limits<double>::infinity();
    std::size_t top = 0;
    tree& t = out.t;
    if (q <= o.exact_limit) {
        const interval_dp<Lazy> dp(nnz, dimension, o.model, o.exact_limit);
        const double forward = o.model.message_time(dp.entries(0, q - 1), dimension);
        for (std::size_t k = 0; k < q; ++k) {
            const double c = dp.root_at(k, 0, q - 1) + (static_cast<int>(k) == root ? 0 : forward);
            if (c < best) best = c, top = k;
        }
        dp.build(0, q - 1, top, -1, t.parent, t.children, t.self_position);
    } else {
        // the root is a grid position, so it can be the top
        const grid_dp<Lazy> dp(nnz, dimension, o.model, make_grid<Lazy>(q, o.grid_blocks, {static_cast<std::size_t>(root)}));
        const double forward = o.model.message_time(dp.entries(0, q - 1), dimension);
        const std::size_t g = dp.blocks();
        std::size_t top_block = 0;
        for (std::size_t m = 0; m < g; ++m) { // top at grid position m: [0, G_m) and [G_m + 1, q)
            const std::size_t r = dp.grid(m);
            const double c = dp.join_states(nnz[r], 0, m, 0, m, g, 1) + (static_cast<int>(r) == root ? 0 : forward);
            if (c < best) best = c, top = r, top_block = m;
        }
        if (top_block > 0) {
            dp.build(0, top_block, 0, static_cast<int>(top), t.parent, t.children, t.self_position);
            t.self_position[top] = 1;
        }
        if (top + 1 < q) dp.build(top_block, g, 1, static_cast<int>(top), t.parent, t.children, t.self_position);
        t.parent[top] = -1;
    }
    std::vector<int> position(q);
    std::iota(position.begin(), position.end(), 0);
    sort_children_by_position<Lazy>(t, position);
    t.top = static_cast<int>(top);
    t.destination = root;
    t.order_preserving = true;
    out.cost = best;
    return out;
}

} // namespace detail

/// The tree of least modelled completion time, with its modelled cost;
/// nnz[r] = rank r's entry count.
/// @throws sparse_reduce::error for an invalid root or a NaN or infinite model
template <class Lazy = void>
detail::optimal_result optimal_binary_tree(std::span<const double> nnz, double dimension, int root,
                                                  bool commutative, const optimal_binary_options& o = {})
{
    const int p = static_cast<int>(nnz.size());
    // A NaN or infinite model would make every comparison of the search
    // false (no tree chosen, endless growth): refused, the same on every rank.
    validate(o.model, "optimal_binary");
    if (root < 0 || root >= std::max(p, 1))
        detail::fail("invalid root ", root, " for a communicator of size ", p);
    detail::optimal_result out{detail::empty_tree(p), 0};
    if (p == 0) {
    } else if (commutative && p <= detail::free_exact_max_ranks) {
        out = detail::free_exact<Lazy>(nnz, dimension, o.model, root);
    } else if (commutative) {
        out = detail::optimal_commutative<Lazy>(nnz, dimension, root, o);
    } else {
        out = detail::optimal_alphabetic<Lazy>(nnz, dimension, root, o);
    }
    out.t.name = "optimal_binary";
    return out;
}

} // namespace sparse_reduce
