#pragma once

#include <string>

#include "core/engine.hpp"

namespace epsjoin::detail {

struct engine_choice {
  const engine* chosen = nullptr;
  std::string reason;
};

/// The rules behind `--engine auto`, documented in docs/engines.md. Never returns nullptr:
/// the oracle is always there.
engine_choice choose_engine(const join_request& request);

}  // namespace epsjoin::detail
