#pragma once
// A join's statistics as a Python dict with the CLI's --json names.

#include <nanobind/nanobind.h>

#include <epsjoin/stats.hpp>

namespace epsjoin_python {

nanobind::dict stats_dict(const epsjoin::join_stats& stats);

}  // namespace epsjoin_python
