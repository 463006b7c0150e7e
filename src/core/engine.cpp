// The engine interface's parameter parsing, shared by every engine (core/engine.hpp).

#include "core/engine.hpp"

#include <algorithm>

namespace epsjoin::detail {

std::unique_ptr<const engine_params> engine::read_params(param_reader& /*reader*/) const {
  // No keys: parse_params has already refused any key given, so there is nothing to read.
  return std::make_unique<engine_params>();
}

std::vector<param_spec> engine::param_specs() const {
  const param_map none;
  param_reader reader(none);
  read_params(reader);
  return reader.specs();
}

std::unique_ptr<const engine_params> engine::parse_params(const param_map& values) const {
  // Unknown keys first, as before the parse was typed: a misspelt key says so even when
  // another value is bad too.
  const std::vector<param_spec> specs = param_specs();
  for (const auto& [key, value] : values) {
    // Named in an init-capture: clang 14 (the fuzz build) cannot capture a structured binding.
    const bool known = std::any_of(specs.begin(), specs.end(),
                                   [&given = key](const param_spec& s) { return s.key == given; });
    if (!known) throw invalid_argument(unknown_param_message(name(), key, specs));
  }
  param_reader reader(values);
  return read_params(reader);
}

}  // namespace epsjoin::detail
