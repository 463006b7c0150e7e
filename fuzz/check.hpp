#pragma once
// What every successful read must give, whatever the bytes were: at least one point of at least
// one dimension, and only finite values. A fuzzer that finds otherwise stops on the abort.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "epsjoin/dataset.hpp"

namespace epsjoin::fuzz {

[[noreturn]] inline void broken(const char* what) {
  std::fprintf(stderr, "epsjoin fuzz: broken promise: %s\n", what);
  std::abort();
}

inline void require(bool holds, const char* what) {
  if (!holds) broken(what);
}

/// The fuzzer's bytes as text (for the parsers that take text).
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void check_points(const dataset& points) {
  require(points.n() >= 1 && points.d() >= 1, "a read gave no points or dimension 0");
  const dataset_view view = points.view();
  for (std::size_t i = 0; i < points.n(); ++i) {
    for (std::size_t k = 0; k < points.d(); ++k) {
      require(std::isfinite(view.at(i, k)), "a read gave a NaN or an infinity");
    }
  }
}

}  // namespace epsjoin::fuzz
