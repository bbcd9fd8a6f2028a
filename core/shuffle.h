// ember: a portable Fisher-Yates shuffle: mt19937_64 (fully specified by the standard) with an
// unbiased bounded draw of our own (std::uniform_int_distribution differs between standard
// libraries), so a seed gives the same permutation on every rank, compiler and library.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace ember {

template <class T>
void shuffle_in_place(T* v, size_t n, std::mt19937_64& gen) {
  for (size_t i = n; i > 1; --i) {
    const uint64_t bound = i, limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t r;
    do r = gen();
    while (r >= limit);
    std::swap(v[i - 1], v[static_cast<size_t>(r % bound)]);
  }
}
template <class T>
void shuffle_in_place(std::vector<T>& v, std::mt19937_64& gen) {
  shuffle_in_place(v.data(), v.size(), gen);
}

}  // namespace ember
