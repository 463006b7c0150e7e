#include "support/seed.hpp"

#include <cstdlib>
#include <string>

namespace epsjoin::test {

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    const char* text = std::getenv("EPSJOIN_TEST_SEED");
    return text != nullptr ? std::stoull(text) : std::uint64_t{20261122};
  }();
  return seed;
}

}  // namespace epsjoin::test
