#pragma once

#include <cstdint>

namespace epsjoin::test {

/// The suite's seed: EPSJOIN_TEST_SEED when set, else a fixed default. Printed by main().
std::uint64_t test_seed();

}  // namespace epsjoin::test
