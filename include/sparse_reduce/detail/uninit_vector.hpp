#pragma once
// std::vector whose resize() leaves new elements default-initialised: kernels
// size an output to its worst case and write it once, with no zero-fill pass.
// value_vector<T>: the vector of values the library's buffers hold. Both are
// a contiguous array of bools for bool (bool_vector), where std::vector packs
// bits and has no data(). raw_room: a buffer that is never initialised.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace sparse_reduce::detail {

template <class T, class Base = std::allocator<T>>
struct default_init_allocator : Base {
    using Base::Base;
    template <class U>
    struct rebind {
        using other = default_init_allocator<U, typename std::allocator_traits<Base>::template rebind_alloc<U>>;
    };
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>)
    {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args)
    {
        std::allocator_traits<Base>::construct(static_cast<Base&>(*this), p, std::forward<Args>(args)...);
    }
};

// The part of std::vector's interface the library uses, over bool[].
class bool_vector {
public:
    using value_type = bool;
    using size_type = std::size_t;
    using iterator = bool*;
    using const_iterator = const bool*;

    bool_vector() = default;
    explicit bool_vector(std::size_t n, bool v = false) { assign(n, v); }
    template <std::input_iterator It>
    bool_vector(It first, It last) { assign(first, last); }
    bool_vector(const bool_vector& o) { assign(o.begin(), o.end()); }
    bool_vector(bool_vector&& o) noexcept { swap(o); }
    bool_vector& operator=(bool_vector o) noexcept
    {
        swap(o);
        return *this;
    }

    std::size_t size() const noexcept { return size_; }
    std::size_t capacity() const noexcept { return capacity_; }
    bool empty() const noexcept { return size_ == 0; }
    bool* data() noexcept { return data_.get(); }
    const bool* data() const noexcept { return data_.get(); }
    bool* begin() noexcept { return data(); }
    bool* end() noexcept { return data() + size_; }
    const bool* begin() const noexcept { return data(); }
    const bool* end() const noexcept { return data() + size_; }
    bool& operator[](std::size_t i) noexcept { return data_[i]; }
    const bool& operator[](std::size_t i) const noexcept { return data_[i]; }
    bool& back() noexcept { return data_[size_ - 1]; }

    void reserve(std::size_t n)
    {
        if (n <= capacity_) return;
        std::unique_ptr<bool[]> grown(new bool[n]);
        std::copy(begin(), end(), grown.get());
        data_ = std::move(grown);
        capacity_ = n;
    }
    void resize(std::size_t n) // new elements uninitialised, as uninit_vector's
    {
        reserve(n);
        size_ = n;
    }
    void resize(std::size_t n, bool v)
    {
        reserve(n);
        if (n > size_) std::fill(end(), begin() + n, v);
        size_ = n;
    }
    void assign(std::size_t n, bool v)
    {
        size_ = 0;
        resize(n, v);
    }
    template <std::input_iterator It>
    void assign(It first, It last)
    {
        clear();
        for (; first != last; ++first) push_back(static_cast<bool>(*first));
    }
    void push_back(bool v)
    {
        if (size_ == capacity_) reserve(std::max<std::size_t>(8, 2 * capacity_));
        data_[size_++] = v;
    }
    template <std::forward_iterator It>
    bool* insert(const bool* pos, It first, It last)
    {
        const auto at = static_cast<std::size_t>(pos - data());
        const auto n = static_cast<std::size_t>(std::distance(first, last));
        reserve(std::max(size_ + n, 2 * capacity_));
        std::copy_backward(begin() + at, end(), end() + n);
        std::copy(first, last, begin() + at);
        size_ += n;
        return begin() + at;
    }
    void clear() noexcept { size_ = 0; }
    void swap(bool_vector& o) noexcept
    {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        std::swap(capacity_, o.capacity_);
    }

private:
    std::unique_ptr<bool[]> data_;
    std::size_t size_ = 0, capacity_ = 0;
};

// Elements of a trivial type, never initialised: a drain's bytes, the
// words of node_buffers' slots. Not an uninit_vector: with an allocator of
// its own, std::vector's resize and destructor visit every element in an
// unoptimised build (a fifth of a debug run's time for buffers of megabytes).
template <class T>
class raw_room {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

public:
    void make(std::size_t n) // the old elements are not kept
    {
        data_ = std::make_unique_for_overwrite<T[]>(n);
        size_ = n;
    }
    void grow(std::size_t n) // to at least n, keeping the old elements; geometric, as std::vector's resize
    {
        if (n <= size_) return;
        const std::size_t grown = std::max(n, 2 * size_);
        auto bigger = std::make_unique_for_overwrite<T[]>(grown);
        std::copy(data(), data() + size_, bigger.get());
        data_ = std::move(bigger);
        size_ = grown;
    }
    T* data() const noexcept { return data_.get(); }
    std::size_t size() const noexcept { return size_; }
    T* begin() const noexcept { return data(); } // a contiguous range: converts to std::span<T>
    T* end() const noexcept { return data() + size_; }

private:
    std::unique_ptr<T[]> data_;
    std::size_t size_ = 0;
};
using byte_room = raw_room<std::byte>;

template <class T>
using uninit_vector = std::conditional_t<std::is_same_v<T, bool>, bool_vector, std::vector<T, default_init_allocator<T>>>;
template <class T>
using value_vector = std::conditional_t<std::is_same_v<T, bool>, bool_vector, std::vector<T>>;

} // namespace sparse_reduce::detail
