#pragma once
// The windowed executor's small per-call bookkeeping (a rank's nodes, their
// children, request arrays, per-window entry counts) comes from an arena kept
// across calls by a plan, or by the communicator's cache for one-shot calls.
// A call carves from one block; what does not fit comes from the heap and
// grows the block for the next call, so a loop of calls of one shape
// allocates nothing after its first. Nothing is freed one by one: a call's
// memory goes back when its lease ends.
//
// A plain bump allocator and arena_array, rather than std::pmr: the
// polymorphic allocator's uses-allocator construction costs every
// translation unit that runs a reduce more to compile than this whole file.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace sparse_reduce::detail {

class call_arena {
public:
    // One call's memory. A nested lease (a collective inside a collective on
    // the same arena) takes nothing from the block.
    class lease {
    public:
        explicit lease(call_arena& a)
            : arena_(a), owner_(!a.leased_), at_(owner_ ? a.block_.get() : nullptr), end_(owner_ ? at_ + a.size_ : nullptr)
        {
            if (owner_) arena_.leased_ = true;
        }
        ~lease()
        {
            while (chunks_) {
                chunk* next = chunks_->next;
                ::operator delete(static_cast<void*>(chunks_), chunk_alignment);
                chunks_ = next;
            }
            if (!owner_) return;
            arena_.leased_ = false;
            if (heap_bytes_) arena_.grow(arena_.size_ + heap_bytes_);
        }
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;

        // `bytes` aligned to `align` (a power of two); throws std::bad_alloc.
        void* allocate(std::size_t bytes, std::size_t align)
        {
            if (void* p = carve(bytes, align)) return p;
            // a heap chunk of at least twice the last one, counted for the block
            const std::size_t need = bytes + align + sizeof(chunk), size = need > 2 * last_chunk_ ? need : 2 * last_chunk_;
            auto* c = static_cast<chunk*>(::operator new(size, chunk_alignment)); // as std::pmr's heap resource
            c->next = chunks_;
            chunks_ = c;
            last_chunk_ = size;
            heap_bytes_ += size;
            at_ = reinterpret_cast<std::byte*>(c) + sizeof(chunk);
            end_ = reinterpret_cast<std::byte*>(c) + size;
            return carve(bytes, align);
        }

    private:
        struct alignas(std::max_align_t) chunk {
            chunk* next;
        };
        static constexpr std::align_val_t chunk_alignment{alignof(chunk)};
        void* carve(std::size_t bytes, std::size_t align) noexcept
        {
            if (!at_) return nullptr;
            const auto a = (reinterpret_cast<std::uintptr_t>(at_) + align - 1) & ~(std::uintptr_t(align) - 1);
            auto* p = reinterpret_cast<std::byte*>(a);
            if (p > end_ || static_cast<std::size_t>(end_ - p) < bytes) return nullptr;
            at_ = p + bytes;
            return p;
        }

        call_arena& arena_;
        bool owner_;
        std::byte* at_;
        std::byte* end_;
        chunk* chunks_ = nullptr;
        std::size_t last_chunk_ = 256;
        std::size_t heap_bytes_ = 0;
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

// A growable array in a call's lease (or, without one, on the heap): what
// the executor's bookkeeping needs of std::vector, no more. Elements are
// built in place and never move unless the array grows.
template <class T>
class arena_array {
public:
    explicit arena_array(call_arena::lease* mem = nullptr) noexcept : mem_(mem) {}
    // (delegating: a throwing element leaves an array whose destructor runs)
    arena_array(std::size_t n, call_arena::lease* mem) : arena_array(mem)
    {
        make_room(n);
        for (; size_ < n; ++size_) ::new (static_cast<void*>(data_ + size_)) T();
    }
    arena_array(std::size_t n, const T& v, call_arena::lease* mem) : arena_array(mem) { assign(n, v); }
    ~arena_array()
    {
        clear();
        release(data_);
    }
    arena_array(const arena_array&) = delete;
    arena_array& operator=(const arena_array&) = delete;

    void reserve(std::size_t n)
    {
        if (n > cap_) relocate(n);
    }
    void resize(std::size_t n)
    {
        reserve(n);
        while (size_ > n) data_[--size_].~T();
        for (; size_ < n; ++size_) ::new (static_cast<void*>(data_ + size_)) T();
    }
    // (v must not be an element of this array, nor emplace_back's arguments)
    void assign(std::size_t n, const T& v)
    {
        clear();
        if (n > cap_) make_room(n);
        for (; size_ < n; ++size_) ::new (static_cast<void*>(data_ + size_)) T(v);
    }
    template <class... A>
    T& emplace_back(A&&... a)
    {
        if (size_ == cap_) relocate(cap_ ? 2 * cap_ : 4);
        T* p = ::new (static_cast<void*>(data_ + size_)) T(std::forward<A>(a)...);
        ++size_;
        return *p;
    }
    void push_back(const T& v) { emplace_back(v); }
    void clear() noexcept
    {
        while (size_) data_[--size_].~T();
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T* data() { return data_; }
    const T* data() const { return data_; }
    T& operator[](std::size_t k) { return data_[k]; }
    const T& operator[](std::size_t k) const { return data_[k]; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }
    operator std::span<T>() { return {data_, size_}; }
    operator std::span<const T>() const { return {data_, size_}; }

private:
    // Room for n in an empty array: no element moves, so T need not be movable.
    void make_room(std::size_t n)
    {
        if (n == 0) return;
        T* d = get(n);
        release(data_);
        data_ = d;
        cap_ = n;
    }
    T* get(std::size_t n)
    {
        if (n > std::size_t(-1) / (2 * sizeof(T))) throw std::bad_alloc();
        return static_cast<T*>(mem_ ? mem_->allocate(n * sizeof(T), alignof(T))
                                    : ::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    }
    void relocate(std::size_t n)
    {
        static_assert(std::is_nothrow_move_constructible_v<T>, "arena_array moves its elements when it grows");
        T* d = get(n);
        for (std::size_t k = 0; k < size_; ++k) {
            ::new (static_cast<void*>(d + k)) T(std::move(data_[k]));
            data_[k].~T();
        }
        release(data_);
        data_ = d;
        cap_ = n;
    }
    void release(T* p) noexcept
    {
        if (!mem_ && p) ::operator delete(static_cast<void*>(p), std::align_val_t(alignof(T)));
    }

    call_arena::lease* mem_;
    T* data_ = nullptr;
    std::size_t size_ = 0, cap_ = 0;
};

} // namespace sparse_reduce::detail
