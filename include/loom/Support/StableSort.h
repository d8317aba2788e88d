//===- StableSort.h - A stable sort without std::stable_sort ----*- C++ -*-===//
//
// Part of Loom. std::stable_sort's contract (equal elements keep their
// order) on std::sort: libstdc++ 12's std::stable_sort instantiates
// std::get_temporary_buffer, deprecated since C++17, and clang reports that
// deprecation in every caller (llvm/llvm-project#76515; libstdc++ 13 fixed
// its header). Loom sorts with this instead of std::stable_sort and
// llvm::stable_sort, so that its build stays free of warnings. Plain C++17:
// libloomrt uses it too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_STABLESORT_H
#define LOOM_SUPPORT_STABLESORT_H

#include <algorithm>
#include <iterator>
#include <numeric>
#include <vector>

namespace loom {

/// Sorts [first, last) by \p less, equal elements in their original order:
/// positions sorted by (element, position), a strict total order, then the
/// elements moved into place. O(n log n) comparisons and n moves.
template <typename RandomIt, typename Less>
void stableSort(RandomIt first, RandomIt last, Less less) {
  using Value = typename std::iterator_traits<RandomIt>::value_type;
  std::vector<size_t> order(size_t(last - first));
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (less(first[a], first[b]))
      return true;
    if (less(first[b], first[a]))
      return false;
    return a < b;
  });
  std::vector<Value> sorted;
  sorted.reserve(order.size());
  for (size_t i : order)
    sorted.push_back(std::move(first[i]));
  std::move(sorted.begin(), sorted.end(), first);
}

/// stableSort over a whole range (a container or an llvm::SmallVector).
template <typename Range, typename Less>
void stableSort(Range &range, Less less) {
  stableSort(std::begin(range), std::end(range), less);
}

} // namespace loom

#endif // LOOM_SUPPORT_STABLESORT_H
