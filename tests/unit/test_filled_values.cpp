// epsjoin::filled_values: every slot holds the value, on any number of threads; a stop from the
// progress callback stops the fill and reaches the caller.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "epsjoin/result.hpp"

namespace epsjoin::test {
namespace {

TEST(filled_values, every_slot_holds_the_value) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000},
                              (std::size_t{3} << 20) + 17}) {
    for (const unsigned threads : {0u, 1u, 3u}) {
      const auto values = filled_values(n, 1.0, threads);
      ASSERT_EQ(values.size(), n);
      EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](double v) { return v == 1.0; }))
          << n << " values on " << threads << " threads";
    }
  }
  const auto negative = filled_values(5, -2.5, 2);
  EXPECT_TRUE(std::all_of(negative.begin(), negative.end(), [](double v) { return v == -2.5; }));
}

TEST(filled_values, a_stop_from_the_progress_callback_reaches_the_caller) {
  EXPECT_THROW(filled_values(std::size_t{64} << 20, 1.0, 2,
                             [](double) { throw std::runtime_error("stopped"); }),
               std::runtime_error);
}

}  // namespace
}  // namespace epsjoin::test
