#pragma once
// The engines of this build that run on a GPU (processor gpu, tensor or cpu+gpu) and whose
// device is there, for the GPU tests that run every one of them.

#include <string>
#include <vector>

#include "epsjoin/join.hpp"

namespace epsjoin::test {

inline std::vector<std::string> device_engines() {
  std::vector<std::string> names;
  for (const engine_info& e : engines()) {
    if (e.processor != "cpu" && e.available) names.push_back(e.name);
  }
  return names;
}

}  // namespace epsjoin::test
