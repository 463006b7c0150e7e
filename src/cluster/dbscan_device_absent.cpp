// cluster/dbscan_device.hpp for a build without CUDA (built only then): no engine has the
// device-links path, so DBSCAN always merges on the host.

#include "cluster/dbscan_device.hpp"

namespace epsjoin::detail {

std::optional<dbscan_result> dbscan_on_device(resources& /*res*/, dataset_view /*points*/,
                                              double /*eps*/, std::size_t /*min_samples*/,
                                              const dbscan_options& /*options*/) {
  return std::nullopt;
}

}  // namespace epsjoin::detail
