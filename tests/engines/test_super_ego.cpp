// super-ego against the oracle: defaults in float64 and float32, and tiny leaf and chunk sizes
// so the recursion splits, prunes and reaches the work queue's later chunks on small inputs.
#include "support/harness.hpp"

EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_f64, {"super-ego"});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_f32, {"super-ego", {}, epsjoin::scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_tiny_f64,
                              {"super-ego", {{"leaf", "2"}, {"chunk", "3"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_tiny_merge_f32,
                              {"super-ego",
                               {{"leaf", "1"}, {"chunk", "7"}, {"sort", "merge"},
                                {"reorder", "variance"}},
                               epsjoin::scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_unordered_f64,
                              {"super-ego", {{"leaf", "5"}, {"chunk", "1"}, {"reorder", "off"}}});
