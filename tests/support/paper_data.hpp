#pragma once
// The papers' Expo datasets and the exact result sizes the lbjoin issue's reference table gives.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin::test {

/// `epsjoin gen expo:d:n --paper`: the papers' generator and 6-digit rounding.
dataset paper_expo(std::size_t d, std::size_t n);

struct reference_case {
  std::size_t d, n;
  double eps;
  std::uint64_t with_self;  ///< |R| including the n self pairs
};

/// The eight rows of the reference table (Expo2D/4D/8D 2M, Expo16D 1M; S near 50 and 500).
const std::vector<reference_case>& reference_cases();

/// A test name such as Expo2D_2000000_eps0p000141.
std::string reference_case_name(const testing::TestParamInfo<reference_case>& info);
/// GoogleTest prints a failing case's parameter with this (a byte dump otherwise).
void PrintTo(const reference_case& c, std::ostream* out);

}  // namespace epsjoin::test
