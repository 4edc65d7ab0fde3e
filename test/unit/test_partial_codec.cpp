// allreduce's partial-result codec (collective/allreduce/partial_codec.hpp),
// without MPI: a partial encoded as wire blocks (behind the status word, as
// recursive doubling and split-allgather send it) parses and decodes back to
// the same entries, dense or index/value, in every wire format; corrupt
// messages are refused with sparse_reduce::error. A sparse partial's empty
// windows travel as empty runs: its message costs its entries, however
// large the dimension.

#include <boost/test/unit_test.hpp>

#include <sparse_reduce/collective/allreduce/partial_codec.hpp>
#include <sparse_reduce/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

namespace sr = sparse_reduce;
namespace sd = sparse_reduce::detail;
namespace sw = sparse_reduce::wire;

namespace {

// A partial of `dim` doubles with about density * dim non-zero entries,
// dense or index/value as the codec would hold it.
sd::partial<double> random_partial(std::size_t dim, double density, std::mt19937_64& rng)
{
    std::bernoulli_distribution present(density);
    std::uniform_real_distribution<double> value(-4, 4);
    std::vector<double> dense(dim, 0.0);
    std::vector<std::uint64_t> idx;
    std::vector<double> val;
    for (std::size_t i = 0; i < dim; ++i)
        if (present(rng)) {
            dense[i] = value(rng) + 8; // never 0, the identity of +
            idx.push_back(i);
            val.push_back(dense[i]);
        }
    sd::partial<double> p;
    p.is_dense = sd::dense_is_smaller<double>(idx.size(), dim);
    if (p.is_dense) p.dense = dense;
    else p.sparse = sr::index_value_vector<double, std::uint64_t>(dim, idx, val);
    return p;
}

std::vector<double> to_dense(const sd::partial<double>& p, std::size_t dim)
{
    if (p.is_dense) return p.dense;
    std::vector<double> d(dim, 0.0);
    for (std::size_t k = 0; k < p.sparse.nnz(); ++k) d[p.sparse.indices()[k]] = p.sparse.values()[k];
    return d;
}

// The message's blocks (after the status word) parsed and decoded.
sd::partial<double> round_trip(const sd::wire_buffer& buf, std::size_t n, std::size_t dim, std::size_t window)
{
    const auto blocks = sd::parse_partial<double>(sd::bytes_of(buf, n).subspan(8), dim, window);
    return sd::decode_partial(blocks, dim, 0.0);
}

} // namespace

BOOST_AUTO_TEST_SUITE(partial_codec)

BOOST_AUTO_TEST_CASE(round_trip_in_every_format)
{
    std::mt19937_64 rng(2026);
    for (const std::size_t dim : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{70000}})
        for (const double density : {0.0, 0.001, 0.05, 0.6, 1.0})
            for (const sw::format f : {sw::adaptive, sw::dense, sw::index_value, sw::rle})
                for (const std::size_t window : {std::size_t{1}, std::size_t{64}, std::size_t{16384}}) {
                    if (dim > 1000 && window == 1) continue; // a block per element: slow, nothing new
                    const auto p = random_partial(dim, density, rng);
                    sd::wire_buffer buf;
                    const std::size_t n = sd::encode_partial(&p, dim, window, 0.0, f, 0, buf);
                    BOOST_TEST_CONTEXT("dim " << dim << ", density " << density << ", " << sw::to_string(f)
                                              << ", window " << window)
                    {
                        BOOST_TEST(buf[0] == 0u); // the status word: ok
                        const auto q = round_trip(buf, n, dim, window);
                        BOOST_TEST(to_dense(q, dim) == to_dense(p, dim));
                        // decoded dense exactly when its blocks' entries fill it
                        const auto blocks = sd::parse_partial<double>(sd::bytes_of(buf, n).subspan(8), dim, window);
                        BOOST_TEST(q.is_dense == sd::dense_is_smaller<double>(blocks.entries, dim));
                    }
                }
}

BOOST_AUTO_TEST_CASE(a_failed_sender_sends_its_status_alone)
{
    sd::wire_buffer buf;
    BOOST_TEST(sd::encode_partial<double>(nullptr, 1000, 64, 0.0, sw::adaptive, 4, buf) == 8u);
    BOOST_TEST(buf[0] == 4u);
}

BOOST_AUTO_TEST_CASE(corrupt_messages_are_refused)
{
    std::mt19937_64 rng(7);
    const std::size_t dim = 5000, window = 1024;
    for (const double density : {0.01, 1.0}) {
        const auto p = random_partial(dim, density, rng);
        sd::wire_buffer buf;
        const std::size_t n = sd::encode_partial(&p, dim, window, 0.0, sw::adaptive, 0, buf);
        // cut short: the last block does not fit
        BOOST_CHECK_THROW(round_trip(buf, n - 8, dim, window), sr::error);
        // a trailing word after the last block
        sd::wire_buffer longer = buf;
        longer.resize(n / 8 + 2, 0);
        BOOST_CHECK_THROW(round_trip(longer, n + 8, dim, window), sr::error);
        // a wrong block tag in the first block's header
        sd::wire_buffer bad_tag = buf;
        reinterpret_cast<std::byte*>(bad_tag.data())[8] = std::byte{0x7f};
        BOOST_CHECK_THROW(round_trip(bad_tag, n, dim, window), sr::error);
        // a count past the message in the first block's header
        sd::wire_buffer bad_count = buf;
        const std::uint32_t huge = 0x7fffffff;
        std::memcpy(reinterpret_cast<std::byte*>(bad_count.data()) + 12, &huge, 4);
        BOOST_CHECK_THROW(round_trip(bad_count, n, dim, window), sr::error);
        // blocks for another dimension
        BOOST_CHECK_THROW(round_trip(buf, n, dim + window, window), sr::error);
    }
}

// A sparse partial in a huge dimension: empty runs between its entries,
// split where they pass the count's 32 bits (windows of one element), and
// only its entries' blocks parsed.
BOOST_AUTO_TEST_CASE(empty_windows_travel_as_runs)
{
    const std::size_t huge = std::size_t{1} << 40, past_u32 = (std::size_t{1} << 33) + 5;
    for (const auto& [dim, window] : {std::pair{huge, std::size_t{1} << 17}, std::pair{past_u32, std::size_t{1}},
                                      std::pair{std::size_t{1000}, std::size_t{64}}}) {
        const std::vector<std::uint64_t> idx{0, 70, (dim / 2) | 1, dim - 1};
        const std::vector<double> val{1.5, -2, 3, 4};
        sd::partial<double> p;
        p.sparse = sr::index_value_vector<double, std::uint64_t>(dim, idx, val);
        for (const sw::format f : {sw::adaptive, sw::dense, sw::index_value, sw::rle})
            BOOST_TEST_CONTEXT("dim " << dim << ", window " << window << ", " << sw::to_string(f))
            {
                sd::wire_buffer buf;
                const std::size_t n = sd::encode_partial(&p, dim, window, 0.0, f, 0, buf);
                // at most 4 blocks (at most a window of doubles each) and 5 runs, 6 where one is split
                BOOST_TEST(n <= 8 + 4 * (24 + window * sizeof(double)) + 6 * 8);
                const auto blocks = sd::parse_partial<double>(sd::bytes_of(buf, n).subspan(8), dim, window);
                BOOST_TEST(blocks.views.size() <= 10u);
                std::size_t full = 0; // dense and RLE blocks count as full
                for (std::size_t w = 0, k = 0; k < idx.size(); ++k)
                    if (k == 0 || idx[k] / window != w) w = idx[k] / window, full += std::min(window, dim - w * window);
                BOOST_TEST(blocks.entries == (f == sw::dense || f == sw::rle ? full : 4u));
                const auto q = sd::decode_partial(blocks, dim, 0.0);
                BOOST_TEST_REQUIRE(!q.is_dense);
                BOOST_TEST((std::vector<std::uint64_t>(q.sparse.indices().begin(), q.sparse.indices().end()) == idx));
                BOOST_TEST((std::vector<double>(q.sparse.values().begin(), q.sparse.values().end()) == val));
            }
    }
}

BOOST_AUTO_TEST_CASE(malformed_empty_runs_are_refused)
{
    const std::size_t dim = 1000, window = 64; // 16 windows, the last of 40 elements
    sd::partial<double> empty;
    empty.sparse = sr::index_value_vector<double, std::uint64_t>(dim);
    sd::wire_buffer buf;
    const std::size_t n = sd::encode_partial(&empty, dim, window, 0.0, sw::adaptive, 0, buf);
    BOOST_TEST_REQUIRE(n == 16u); // the status word, one run
    BOOST_TEST((static_cast<sw::block_tag>(reinterpret_cast<const std::byte*>(buf.data())[8]) == sw::block_tag::empty_run));
    BOOST_TEST(round_trip(buf, n, dim, window).sparse.nnz() == 0u);
    const auto with_count = [&](std::uint32_t count) {
        sd::wire_buffer b = buf;
        std::memcpy(reinterpret_cast<std::byte*>(b.data()) + 12, &count, 4);
        return b;
    };
    BOOST_CHECK_THROW(round_trip(with_count(17), n, dim, window), sr::error);         // past the dimension
    BOOST_CHECK_THROW(round_trip(with_count(0xffffffffu), n, dim, window), sr::error); // far past it
    BOOST_CHECK_THROW(round_trip(with_count(0), n, dim, window), sr::error);          // no windows
    BOOST_CHECK_THROW(round_trip(with_count(15), n, dim, window), sr::error);         // short: a block missing
    // a dense partial never sends a run, even of identities
    sd::partial<double> zeros;
    zeros.is_dense = true;
    zeros.dense.assign(dim, 0.0);
    const std::size_t m = sd::encode_partial(&zeros, dim, window, 0.0, sw::adaptive, 0, buf);
    BOOST_TEST(m == 8 + 16 * 8u); // 16 empty blocks
    // the run is a partial codec's form: a plain block parse refuses its tag
    const auto run = with_count(2);
    BOOST_CHECK_THROW(sw::parse_block<double>(sd::bytes_of(run, n).subspan(8), window), sr::error);
}

BOOST_AUTO_TEST_SUITE_END()
