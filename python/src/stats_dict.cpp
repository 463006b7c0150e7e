#include "stats_dict.hpp"

#include <nanobind/stl/string.h>

#include <string>

namespace epsjoin_python {

namespace nb = nanobind;

nb::dict stats_dict(const epsjoin::join_stats& stats) {
  nb::dict d;
  d["engine"] = stats.engine;
  d["engine_reason"] = stats.engine_reason;
  d["n"] = stats.n_data;
  d["n_queries"] = stats.n_queries;
  d["d"] = stats.d;
  d["eps"] = stats.eps;
  d["self_join"] = stats.self_join;
  d["precision"] = std::string(epsjoin::to_string(stats.precision));
  d["threads"] = stats.threads;
  d["pairs"] = stats.pairs;
  d["self_pairs"] = stats.self_pairs;
  d["pairs_with_self"] = stats.self_join ? stats.pairs + stats.n_data : stats.pairs;
  d["selectivity"] = stats.selectivity();
  d["candidates"] = stats.candidates;
  nb::dict stages;
  for (const epsjoin::stage_time& s : stats.stages) stages[nb::str(s.name.c_str())] = s.seconds;
  d["stages"] = stages;
  d["h2d_point_bytes"] = stats.h2d_point_bytes;
  d["h2d_result_bytes"] = stats.h2d_result_bytes;
  d["seconds"] = stats.seconds;
  d["candidates_per_second"] = stats.candidates_per_second();
  nb::dict notes;
  for (const auto& [name, value] : stats.notes) notes[nb::str(name.c_str())] = value;
  d["notes"] = notes;
  return d;
}

}  // namespace epsjoin_python
