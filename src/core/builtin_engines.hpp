#pragma once
// Factories of the engines compiled into the library; registry.cpp lists them in one place.

#include <memory>

#include "core/engine.hpp"

namespace epsjoin::detail {

std::unique_ptr<engine> make_brute_cpu_engine();
std::unique_ptr<engine> make_super_ego_engine();

}  // namespace epsjoin::detail
