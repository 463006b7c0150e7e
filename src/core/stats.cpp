#include "epsjoin/stats.hpp"

namespace epsjoin {

void join_stats::add_stage(const std::string& name, double s) {
  for (auto& stage : stages) {
    if (stage.name == name) {
      stage.seconds += s;
      return;
    }
  }
  stages.push_back({name, s});
}

}  // namespace epsjoin
