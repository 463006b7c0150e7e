#include "core/auto_select.hpp"

#include <array>
#include <string_view>

#include "core/expects.hpp"

namespace epsjoin::detail {

namespace {

const engine* available(std::string_view name) {
  const engine* e = find_engine(name);
  return (e != nullptr && e->unavailable_reason().empty()) ? e : nullptr;
}

}  // namespace

engine_choice choose_engine(const join_request& request) {
  // Preference order, fastest first, among the engines that are compiled in and can run here.
  // Each engine issue that lands moves its engine into this list with the rule that earned it.
  static constexpr std::array<std::string_view, 1> preference = {"brute-cpu"};
  (void)request;
  for (std::string_view name : preference) {
    if (const engine* e = available(name)) {
      return {e, concat(name, ": the fastest engine built in for this input")};
    }
  }
  throw unavailable("no engine is available for --engine auto");
}

}  // namespace epsjoin::detail
