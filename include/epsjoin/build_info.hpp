#pragma once
/// @file build_info.hpp
/// @brief How this copy of epsjoin was built, and which CUDA devices it sees.

#include <string>
#include <vector>

namespace epsjoin {

struct build_info {
  std::string version;
  std::string build_type;
  std::string compiler;
  bool cuda = false;                 ///< GPU engines compiled in
  std::string cuda_architectures;    ///< e.g. "80;90"
};

struct cuda_device {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::size_t memory_bytes = 0;
  int multiprocessors = 0;
};

build_info build();
/// @brief CUDA devices present; empty without CUDA or without a device (never throws).
std::vector<cuda_device> cuda_devices();

}  // namespace epsjoin
