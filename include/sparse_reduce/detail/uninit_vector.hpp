#pragma once
// std::vector whose resize() leaves new elements default-initialised: kernels
// size an output to its worst case and write it once, with no zero-fill pass.

#include <memory>
#include <new>
#include <type_traits>
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

template <class T>
using uninit_vector = std::vector<T, default_init_allocator<T>>;

} // namespace sparse_reduce::detail
