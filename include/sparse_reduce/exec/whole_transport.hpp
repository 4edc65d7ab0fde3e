#pragma once
// The whole-message reduce's transport (exec/whole_reduce.hpp): a partial
// result as one logical message, sent and received in pieces of
// whole_piece_bytes: the receiver of the dense form folds each while the
// next arrive (receives_in_flight receives posted ahead, sends_in_flight
// sends on the way). Every piece but the last has the first one's size,
// and the header, in the first, gives the total. Nothing a failed call
// sent stays queued: a receiver that finds a windowed stream instead takes
// all of it, and one that cannot allocate a message's room receives it
// into its buffers' drain, piece over piece, and fails (exec/node_buffers.hpp).

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <iterator>
#include <span>
#include <optional>
#include <string>
#include <utility>

#include <mpi.h>

#include "../error.hpp"
#include "../mpi/bytes.hpp"
#include "message.hpp"
#include "node_buffers.hpp"
#include "partial_message.hpp"
#include "reduce_node.hpp" // failure

namespace sparse_reduce::detail {

// The message is built out of line: the error path stays off the receive
// loop, and GCC 12 cannot misread the inlined concatenation (-Warray-bounds).
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_mpi_call(int rc, const char* what)
{
    fail(std::string(what), " failed with MPI error code ", rc);
}
inline void mpi_check(int rc, const char* what)
{
    if (rc != MPI_SUCCESS) fail_mpi_call(rc, what);
}

struct whole_result {
    std::optional<failure> failed;
    bool detected = false; // the failure was found on this rank
    std::size_t bytes_sent = 0, bytes_received = 0, messages_sent = 0;

    void fail(failure f, bool found_here) // the first failure stands
    {
        if (failed) return;
        failed = std::move(f);
        detected = found_here;
    }
};

// The rest of a whole message whose first piece (buf, bytes) arrived where
// a windowed stream was expected (ranks passing different kinds of
// vectors): received into buf piece by piece and dropped, so its sender is
// not left waiting; the windowed node then reports the first as malformed.
inline void drain_whole_pieces(MPI_Comm comm, int from, int tag, std::byte* buf, std::size_t bytes)
{
    partial_header h;
    if (bytes < sizeof h) return;
    std::memcpy(&h, buf, sizeof h);
    if (!pieces_follow(h, bytes)) return;
    for (std::size_t got = bytes; got < h.total_bytes; got += bytes)
        mpi_check(MPI_Recv(buf, static_cast<int>(std::min(bytes, h.total_bytes - got)), MPI_BYTE, from, tag, comm,
                           MPI_STATUS_IGNORE),
                  "MPI_Recv");
}

// Pieces in flight: the sender's keep the link busy across the rendezvous
// handshake of each (TCP: a piece's data waits for the receiver's answer),
// the receiver's let the next pieces arrive while it folds one.
inline constexpr int sends_in_flight = 4, receives_in_flight = 3;

// Nonblocking sends of one message's pieces, at most sends_in_flight at once
// (in order: MPI keeps the order of one sender's messages on one tag).
class send_ring {
public:
    send_ring(MPI_Comm comm, int to, int tag) : comm_(comm), to_(to), tag_(tag)
    {
        std::fill(std::begin(req_), std::end(req_), MPI_REQUEST_NULL);
    }
    send_ring(const send_ring&) = delete;
    send_ring& operator=(const send_ring&) = delete;
    ~send_ring() { MPI_Waitall(sends_in_flight, req_, MPI_STATUSES_IGNORE); } // after a failed post: no error on top

    void post(const void* buf, int count, MPI_Datatype type)
    {
        MPI_Request& r = req_[next_++ % sends_in_flight];
        mpi_check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        mpi_check(MPI_Isend(buf, count, type, to_, tag_, comm_, &r), "MPI_Isend");
    }
    void finish() { mpi_check(MPI_Waitall(sends_in_flight, req_, MPI_STATUSES_IGNORE), "MPI_Waitall"); }

private:
    MPI_Comm comm_;
    int to_, tag_;
    MPI_Request req_[sends_in_flight];
    std::size_t next_ = 0;
};

class whole_transport {
public:
    // scratch_slot: a node_buffers slot for a windowed stream's later messages.
    whole_transport(MPI_Comm comm, int me, node_buffers& ws, std::size_t scratch_slot, whole_result& res)
        : comm_(comm), me_(me), ws_(ws), scratch_slot_(scratch_slot), res_(res)
    {
    }

    // A message goes in pieces of whole_piece_bytes: the receiver of the
    // dense form folds each as the next arrive, and a receiver without room
    // for a message drops it piece by piece into its buffers' drain. Every
    // piece but the last has the first one's size, and the header (in the
    // first) gives the total.
    struct first_piece {
        std::byte* buf;       // room for the whole message, or the drain
        std::size_t bytes;    // received so far
        std::size_t total;    // the whole message
        bool dropped = false; // no room on this rank (a failure): received into the drain
    };
    first_piece receive_first(int from, int tag, int slot)
    {
        MPI_Message m;
        MPI_Status st;
        mpi_check(MPI_Mprobe(from, tag, comm_, &m, &st), "MPI_Mprobe");
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        const auto bytes = static_cast<std::size_t>(count);
        std::byte* buf = room(static_cast<std::size_t>(slot), bytes, from);
        const bool dropped = buf == nullptr;
        if (dropped) buf = drain(bytes);
        mpi_check(MPI_Mrecv(buf, count, MPI_BYTE, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
        res_.bytes_received += bytes;
        partial_header h;
        if (bytes >= sizeof h) std::memcpy(&h, buf, sizeof h);
        if (bytes < sizeof h || h.magic != partial_header::magic_value) {
            drain_stream(from, tag, buf, bytes); // a windowed stream: take it all, so nothing stays queued
            return {buf, bytes, bytes, dropped};
        }
        if (!pieces_follow(h, bytes)) return {buf, bytes, bytes, dropped};
        if (!dropped)
            if (std::byte* whole = room(static_cast<std::size_t>(slot), h.total_bytes, from)) // keeps the first
                return {whole, bytes, h.total_bytes};
        return {drain(bytes), bytes, h.total_bytes, true};
    }
    // The rest of p's pieces, receives_in_flight posted ahead; arrived(bytes so far)
    // after the first and after each piece. An exception from it is this
    // rank's failure, and the pieces are still all received.
    template <class Arrived>
    void receive_rest(int from, int tag, first_piece& p, Arrived&& arrived)
    {
        if (p.dropped) return drop_rest(from, tag, p);
        auto call = [&](std::size_t have) {
            if (res_.failed) return;
            try {
                arrived(have);
            } catch (...) {
                res_.fail({me_, caught_text()}, true);
            }
        };
        if (p.bytes == p.total) return call(p.bytes);
        const std::size_t piece = p.bytes, first = p.bytes;
        MPI_Request req[receives_in_flight];
        std::size_t ends[receives_in_flight] = {};
        std::size_t posted = p.bytes;
        int head = 0, flying = 0;
        auto post = [&] {
            for (; flying < receives_in_flight && posted < p.total; ++flying) {
                const std::size_t n = std::min(piece, p.total - posted);
                const int at = (head + flying) % receives_in_flight;
                mpi_check(MPI_Irecv(p.buf + posted, static_cast<int>(n), MPI_BYTE, from, tag, comm_, &req[at]),
                          "MPI_Irecv");
                ends[at] = posted += n;
            }
        };
        post();
        call(p.bytes);
        while (flying > 0) {
            mpi_check(MPI_Wait(&req[head], MPI_STATUS_IGNORE), "MPI_Wait");
            p.bytes = ends[head];
            head = (head + 1) % receives_in_flight;
            --flying;
            post();
            call(p.bytes);
        }
        res_.bytes_received += p.total - first;
    }
    std::pair<std::byte*, std::size_t> receive(int from, int tag, int slot)
    {
        first_piece p = receive_first(from, tag, slot);
        receive_rest(from, tag, p, [](std::size_t) {});
        return {p.buf, p.bytes};
    }
    void drain_stream(int from, int tag, const std::byte* first, std::size_t bytes)
    {
        message_header h;
        bool last = true;
        if (bytes >= sizeof h) {
            std::memcpy(&h, first, sizeof h);
            last = h.magic != message_header::magic_value || (h.flags & message_header::last);
        }
        while (!last) {
            MPI_Message m;
            MPI_Status st;
            mpi_check(MPI_Mprobe(from, tag, comm_, &m, &st), "MPI_Mprobe");
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            const auto n = static_cast<std::size_t>(count);
            std::byte* buf = room(scratch_slot_, n, from);
            if (!buf) buf = drain(n);
            mpi_check(MPI_Mrecv(buf, count, MPI_BYTE, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
            last = n < sizeof h;
            if (!last) {
                std::memcpy(&h, buf, sizeof h);
                last = h.flags & message_header::last;
            }
        }
    }
    void send(int to, int tag, const std::byte* p, std::size_t bytes)
    {
        partial_header h;
        std::memcpy(&h, p, sizeof h);
        send_ring ring(comm_, to, tag);
        for (std::size_t at = 0; at == 0 || at < bytes; at += whole_piece_bytes)
            ring.post(p + at, static_cast<int>(std::min(whole_piece_bytes, bytes - at)), MPI_BYTE);
        ring.finish();
        res_.bytes_sent += bytes;
        ++res_.messages_sent;
    }
    // A dense-form header and the caller's values as one message, without
    // copying them: the header and the first values as the first piece, the
    // rest from the caller's array.
    template <class T>
    void send_header_and(int to, int tag, const std::byte* header, const T* values, std::size_t msg_bytes)
    {
        const std::size_t first = std::min(whole_piece_bytes, msg_bytes);
        MPI_Aint at[2];
        MPI_Get_address(header, &at[0]);
        MPI_Get_address(values, &at[1]);
        const int lengths[2] = {static_cast<int>(partial_header_bytes), static_cast<int>(first - partial_header_bytes)};
        const MPI_Datatype bytes[2] = {MPI_BYTE, MPI_BYTE};
        MPI_Datatype both;
        mpi_check(MPI_Type_create_struct(2, lengths, at, bytes, &both), "MPI_Type_create_struct");
        MPI_Type_commit(&both);
        send_ring ring(comm_, to, tag);
        ring.post(MPI_BOTTOM, 1, both);
        MPI_Type_free(&both); // freed once the send is done
        const auto* rest = reinterpret_cast<const std::byte*>(values) - partial_header_bytes;
        for (std::size_t done = first; done < msg_bytes; done += whole_piece_bytes)
            ring.post(rest + done, static_cast<int>(std::min(whole_piece_bytes, msg_bytes - done)), MPI_BYTE);
        ring.finish();
        res_.bytes_sent += msg_bytes;
        ++res_.messages_sent;
    }

private:
    // A slot's room for a message from `from`, or none: this rank's failure.
    std::byte* room(std::size_t slot, std::size_t bytes, int from) noexcept
    {
        try {
            return ws_.get<std::byte>(slot, bytes);
        } catch (...) {
        }
        if (!res_.failed)
            res_.fail({me_, text_or_out_of_memory([&] { return no_room_text(bytes, from); })}, true);
        return nullptr;
    }
    // The drain for a piece of `bytes`. Whole messages come in pieces that
    // fit; a larger one (a windowed stream's, from a rank that passed
    // another kind of vector) cannot be received without memory.
    std::byte* drain(std::size_t bytes) const
    {
        const std::span<std::byte> d = ws_.drain();
        if (bytes > d.size()) fail("out of memory for a message of ", bytes, " bytes");
        return d.data();
    }
    void drop_rest(int from, int tag, first_piece& p)
    {
        for (std::size_t at = p.bytes; at < p.total; at += p.bytes)
            mpi_check(MPI_Recv(p.buf, static_cast<int>(std::min(p.bytes, p.total - at)), MPI_BYTE, from, tag, comm_,
                               MPI_STATUS_IGNORE),
                      "MPI_Recv");
        res_.bytes_received += p.total - p.bytes;
        p.bytes = p.total;
    }

    MPI_Comm comm_;
    int me_;
    node_buffers& ws_;
    std::size_t scratch_slot_;
    whole_result& res_;
};

} // namespace sparse_reduce::detail
