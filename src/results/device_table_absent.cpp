// epsjoin/device_table.hpp for a build without CUDA (built only then: CMake leaves *_absent.cpp
// out of a CUDA build): a device table cannot exist there, so every step refuses.

#include <string>

#include "epsjoin/device_table.hpp"
#include "epsjoin/error.hpp"

namespace epsjoin {

namespace {
[[noreturn]] void refuse(const char* what) {
  throw unavailable(std::string(what) + " works on a table in device memory, which needs epsjoin "
                                        "built with CUDA");
}
}  // namespace

device_array<double> device_distances(resources& /*res*/, const device_csr& /*table*/,
                                      dataset_view /*queries*/, dataset_view /*data*/) {
  refuse("device_distances");
}

void sort_device_rows(resources& /*res*/, const device_csr& /*table*/,
                      device_array<double>* /*distances*/) {
  refuse("sort_device_rows");
}

device_array<std::int64_t> device_pairs(resources& /*res*/, const device_csr& /*table*/,
                                        pair_selection /*which*/) {
  refuse("device_pairs");
}

}  // namespace epsjoin
