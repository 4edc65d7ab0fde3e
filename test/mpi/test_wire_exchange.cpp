// Blocks encoded on one rank decode on another: every rank encodes its
// vector in wire blocks and sends the raw bytes to a root, which decodes them
// in rank order, folds them, and compares with the serial fold of the same
// vectors (regenerated from their seeds). Runs at 1, 2, 3, 4, 5 and 8 ranks.

#define BOOST_TEST_MODULE wire_exchange
#include "mpi_fixture.hpp"

#include "../support/reference.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace sr = sparse_reduce;
namespace wire = sparse_reduce::wire;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t block_len = 1000;

template <class T, class Op>
std::vector<T> vector_of(int rank, std::size_t n, double density, placement p, const Op& op, int ranks)
{
    std::mt19937_64 rng(1000 + static_cast<unsigned>(rank));
    return random_dense<T>(rng, n, density, op, p, rank, ranks);
}

// Encodes x block by block into 8-aligned storage; returns the bytes used.
template <class T>
std::vector<std::uint64_t> encode_all(const std::vector<T>& x, const T& id, wire::format f, std::size_t& bytes)
{
    std::size_t cap = 0;
    for (std::size_t b = 0; b < x.size(); b += block_len)
        cap += wire::max_block_bytes<T>(std::min(block_len, x.size() - b), f);
    std::vector<std::uint64_t> storage(cap / 8 + 1);
    auto* out = reinterpret_cast<std::byte*>(storage.data());
    bytes = 0;
    for (std::size_t b = 0; b < x.size(); b += block_len) {
        const std::size_t len = std::min(block_len, x.size() - b);
        bytes += wire::encode_block<T>(std::span<const T>(x.data() + b, len), id, f, out + bytes);
    }
    return storage;
}

// acc = acc ⊗ (decoded blocks), acc on the left.
template <class T, class Op>
void fold_blocks(std::vector<T>& acc, const std::byte* in, std::size_t bytes, const Op& op)
{
    const T id = sr::identity<T>(op);
    std::size_t at = 0;
    for (std::size_t b = 0; b < acc.size(); b += block_len) {
        const std::size_t len = std::min(block_len, acc.size() - b);
        const auto view = wire::parse_block<T>({in + at, bytes - at}, len);
        wire::visit_block(view, id, [&](auto r) {
            for (; !r.done(); r.next()) acc[b + r.index()] = static_cast<T>(op(acc[b + r.index()], r.value()));
        });
        at += view.bytes;
    }
    sr::detail::require(at == bytes, "trailing bytes after the last block");
}

template <class T, class Op>
bool exchange_and_check(int root, std::size_t n, double density, placement p, wire::format f, const Op& op)
{
    auto& comm = world();
    const int me = comm.rank(), size = comm.size();
    const T id = sr::identity<T>(op);
    const auto mine = vector_of<T>(me, n, density, p, op, size);
    std::size_t bytes = 0;
    const auto encoded = encode_all(mine, id, f, bytes);
    bool ok = true;
    if (me != root) {
        comm.send(root, 7, reinterpret_cast<const char*>(encoded.data()), static_cast<int>(bytes));
    } else {
        std::vector<T> acc(n, id), expected(n, id);
        for (int r = 0; r < size; ++r) {
            std::vector<std::uint64_t> storage;
            std::size_t got = bytes;
            if (r == root) {
                storage = encoded;
            } else {
                auto status = comm.probe(r, 7);
                got = static_cast<std::size_t>(*status.count<char>());
                storage.resize(got / 8 + 1);
                comm.recv(r, 7, reinterpret_cast<char*>(storage.data()), static_cast<int>(got));
            }
            fold_blocks(acc, reinterpret_cast<const std::byte*>(storage.data()), got, op);
            expected = dense_fold(expected, vector_of<T>(r, n, density, p, op, size), op);
        }
        ok = first_difference(acc, expected) == -1;
    }
    return all_ok(ok);
}

} // namespace

BOOST_AUTO_TEST_CASE(blocks_decode_on_another_rank)
{
    const int size = world().size();
    for (int root : {0, size - 1, size / 2})
        for (double d : {0.0, 0.001, 0.05, 1.0})
            for (auto p : {placement::uniform, placement::zipf, placement::disjoint})
                for (auto f : {wire::format::adaptive, wire::format::dense, wire::format::index_value, wire::format::rle}) {
                    BOOST_TEST(exchange_and_check<double>(root, 20011, d, p, f, std::plus<>{}),
                               "double plus root " << root << " d " << d << " format " << int(f));
                    if (f != wire::format::rle)
                        BOOST_TEST(exchange_and_check<affine>(root, 5003, d, p, f, compose{}),
                                   "affine root " << root << " d " << d << " format " << int(f));
                }
}
