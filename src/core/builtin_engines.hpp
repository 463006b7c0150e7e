#pragma once
// Factories of the engines compiled into the library; registry.cpp lists them in one place.

#include <memory>
#include <string>

#include "core/engine.hpp"

namespace epsjoin::detail {

std::unique_ptr<engine> make_brute_cpu_engine();

/// An engine this build lacks: listed, but every run throws `unavailable` with `reason`.
std::unique_ptr<engine> make_unavailable_engine(std::string name, std::string processor,
                                                std::string description, std::string reason);

}  // namespace epsjoin::detail
