#include "core/builtin_engines.hpp"
#include "core/engine.hpp"

namespace epsjoin::detail {

namespace {

// Explicit list rather than self-registering statics: a static library drops object files
// nothing refers to, and their registrations with them.
std::vector<std::unique_ptr<engine>> make_registry() {
  std::vector<std::unique_ptr<engine>> list;
  list.push_back(make_brute_cpu_engine());
  list.push_back(make_super_ego_engine());
#ifdef EPSJOIN_HAS_CUDA
#endif
  return list;
}

}  // namespace

const std::vector<std::unique_ptr<engine>>& registered_engines() {
  static const std::vector<std::unique_ptr<engine>> registry = make_registry();
  return registry;
}

const engine* find_engine(std::string_view name) {
  for (const auto& e : registered_engines()) {
    if (e->name() == name) return e.get();
  }
  return nullptr;
}

}  // namespace epsjoin::detail
