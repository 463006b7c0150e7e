#pragma once
/// @file epsjoin.hpp
/// @brief Everything public in one include.

#include "epsjoin/build_info.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/dbscan.hpp"
#include "epsjoin/device_table.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/generate.hpp"
#include "epsjoin/index.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/nearest.hpp"
#include "epsjoin/optics.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/pairs_array.hpp"
#include "epsjoin/partition.hpp"
#include "epsjoin/radii.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"
#include "epsjoin/sink.hpp"
#include "epsjoin/stats.hpp"
