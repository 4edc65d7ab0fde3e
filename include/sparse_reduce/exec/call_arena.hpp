#pragma once
// The windowed executor's small per-call bookkeeping (a rank's nodes, their
// children, request arrays, per-window entry counts) comes from an arena kept
// across calls by a plan, or by the communicator's cache for one-shot calls.
// A call carves from one block; what does not fit comes from the heap and
// grows the block for the next call, so a loop of calls of one shape
// allocates nothing after its first.

#include <cstddef>
#include <memory>
#include <memory_resource>
#include <new>

namespace sparse_reduce::detail {

class call_arena {
public:
    // One call's memory resource. A nested lease (a collective inside a
    // collective on the same arena) takes nothing from the block.
    class lease {
    public:
        explicit lease(call_arena& a)
            : arena_(a), owner_(!a.leased_), mono_(owner_ ? a.block_.get() : nullptr, owner_ ? a.size_ : 0, &upstream_)
        {
            if (owner_) arena_.leased_ = true;
        }
        ~lease()
        {
            mono_.release();
            if (!owner_) return;
            arena_.leased_ = false;
            if (upstream_.bytes) arena_.grow(arena_.size_ + upstream_.bytes);
        }
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        std::pmr::memory_resource* resource() { return &mono_; }

    private:
        // The heap, counting what the block lacked.
        struct counting final : std::pmr::memory_resource {
            std::size_t bytes = 0;
            void* do_allocate(std::size_t n, std::size_t align) override
            {
                bytes += n;
                return std::pmr::new_delete_resource()->allocate(n, align);
            }
            void do_deallocate(void* p, std::size_t n, std::size_t align) override
            {
                std::pmr::new_delete_resource()->deallocate(p, n, align);
            }
            bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
        };
        call_arena& arena_;
        bool owner_;
        counting upstream_; // declared before mono_, which uses it
        std::pmr::monotonic_buffer_resource mono_;
    };

    std::size_t capacity() const { return size_; }

private:
    void grow(std::size_t n) noexcept
    {
        // Without memory for a bigger block the next call takes from the heap again.
        std::unique_ptr<std::byte[]> b(new (std::nothrow) std::byte[n]);
        if (!b) return;
        block_ = std::move(b);
        size_ = n;
    }

    std::unique_ptr<std::byte[]> block_;
    std::size_t size_ = 0;
    bool leased_ = false;
};

} // namespace sparse_reduce::detail
