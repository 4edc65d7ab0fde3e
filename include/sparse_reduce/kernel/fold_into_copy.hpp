#pragma once
// dst = src with a sparse block's entries folded in, each line of dst
// brought in once: src is copied a stretch (4 KiB) at a time just ahead of the
// entries that fall in it, so the fold finds the stretch in L1, where a
// whole copy followed by the entries reads dst back from further out (the
// root of a sparse drop-in spent 28% of its time in that copy).
//
//   src  |...........................................|
//   dst  |==copy==|copy*fold|==copy==|copy*fold|==copy|
//                   ^ entry            ^ entries
//
// (Non-temporal stores for the stretches with no entry do not pay: at the
// root of a 16 MiB output, with 4 KiB and 512-byte stretches, they are no
// faster at 0.1% or 10%, and 1.9x slower at 1%.)

#include <algorithm>
#include <cstddef>

namespace sparse_reduce::detail {

// dst[i] = fold(dst[i], v) for each entry (i, v) of r, indices below len in
// any order, after dst[i] = src[i]; returns the number of entries. The
// reader is taken by value and walked here and the counters are locals, so
// the loop keeps its state in registers; fold should hold the T values it
// needs (the identity) by value, since a T behind a reference may alias dst
// and is reloaded after every store to it (with the state behind
// references and the identity reloaded, it took 25 instructions an entry).
template <class T, class Reader, class Fold>
std::size_t fold_into_copy(const T* src, T* dst, std::size_t len, Reader r, Fold fold)
{
    constexpr std::size_t stretch = std::max<std::size_t>(1, 4096 / sizeof(T));
    std::size_t copied = 0, entries = 0; // dst[0, copied) holds src's
    const auto at = [&](std::size_t i, const T& v) {
        if (i >= copied) {
            const std::size_t to = std::min(len, (i / stretch + 1) * stretch);
            std::copy(src + copied, src + to, dst + copied);
            copied = to;
        }
        dst[i] = fold(dst[i], v);
        ++entries;
    };
    if constexpr (requires { r.for_each(at); }) r.for_each(at); // a reader with a loop of its own (the bitmap's)
    else
        for (; !r.done(); r.next()) at(r.index(), r.value());
    std::copy(src + copied, src + len, dst + copied);
    return entries;
}

} // namespace sparse_reduce::detail
