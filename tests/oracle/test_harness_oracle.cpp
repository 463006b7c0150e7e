// The oracle through the harness: the harness itself must work on every shape, and a broken
// engine must be caught (see test_harness_detects.cpp).
#include "support/harness.hpp"

EPSJOIN_ENGINE_PROPERTY_TESTS(brute_cpu_f64, {"brute-cpu"});
EPSJOIN_ENGINE_PROPERTY_TESTS(brute_cpu_f32, {"brute-cpu", {}, epsjoin::scalar_type::f32});
