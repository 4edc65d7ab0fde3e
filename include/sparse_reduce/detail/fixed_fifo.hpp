#pragma once
// A first-in first-out queue of at most N elements stored inline: a node's
// queues are bounded by its two buffers per stream, so they need no heap.

#include <array>
#include <cassert>
#include <cstddef>

namespace sparse_reduce::detail {

template <class T, std::size_t N>
class fixed_fifo {
public:
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    T& front() { return items_[head_]; }
    const T& operator[](std::size_t k) const { return items_[(head_ + k) % N]; }
    void push_back(const T& x)
    {
        assert(size_ < N);
        items_[(head_ + size_++) % N] = x;
    }
    void pop_front()
    {
        head_ = (head_ + 1) % N;
        --size_;
    }
    void clear() { head_ = size_ = 0; }
    // Removes the first element equal to x, keeping the order of the rest.
    void erase_value(const T& x)
    {
        std::size_t k = 0;
        while (k < size_ && !((*this)[k] == x)) ++k;
        if (k == size_) return;
        for (; k + 1 < size_; ++k) items_[(head_ + k) % N] = items_[(head_ + k + 1) % N];
        --size_;
    }
    template <class Pred>
    bool any_of(Pred&& p) const
    {
        for (std::size_t k = 0; k < size_; ++k)
            if (p((*this)[k])) return true;
        return false;
    }

private:
    std::array<T, N> items_{};
    std::size_t head_ = 0, size_ = 0;
};

} // namespace sparse_reduce::detail
