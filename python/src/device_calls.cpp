#include "device_calls.hpp"

#include <memory>
#include <utility>
#include <vector>

#include <epsjoin/epsjoin.hpp>

#include "owned_array.hpp"
#include "released_call.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

epsjoin::dataset_view device_view_of(const device_points& points) {
  epsjoin::dataset_view v;
  v.data = points.data();
  v.n = points.shape(0);
  v.d = points.shape(1);
  v.space = epsjoin::memory_space::device;
  v.device = points.device_id();
  v.type = scalar_type_of(points.dtype());
  return v;
}

run_settings on_points_device(const run_settings& s, int device) {
  run_settings on_device = s;
  on_device.device = device;
  on_device.devices = {device};
  on_device.devices_automatic = false;
  return on_device;
}

namespace {

template <class Sink>
epsjoin::join_stats run_device_join(const device_points& queries,
                                    const std::optional<device_points>& data, double eps,
                                    bool include_self, const run_settings& s, Sink& sink) {
  const epsjoin::dataset_view a = device_view_of(queries);
  const epsjoin::dataset_view b = data ? device_view_of(*data) : a;
  check_same_dtype(a, b);
  if (a.device != b.device) {
    throw epsjoin::invalid_argument("the two point sets lie on different devices");
  }
  // The resources of the points' device (a GPU engine runs where they lie).
  return run_join_released(eps, include_self, on_points_device(s, a.device),
                           [&](epsjoin::resources& r, const epsjoin::join_options& o) {
                             return data ? epsjoin::join(r, a, b, o, sink)
                                         : epsjoin::self_join(r, a, o, sink);
                           });
}

/// A 1-D array over device memory that `owner` keeps alive.
template <class T>
nb::object device_array(T* data, std::size_t n, int device, nb::handle owner) {
  const std::size_t shape[1] = {n};
  return nb::cast(nb::ndarray<T, nb::ndim<1>, nb::device::cuda>(data, 1, shape, owner, nullptr,
                                                                nb::dtype<T>(),
                                                                nb::device::cuda::value, device));
}

}  // namespace

nb::tuple device_neighbor_table(device_points queries, std::optional<device_points> data,
                                double eps, bool include_self, const run_settings& settings) {
  epsjoin::device_csr_sink sink;
  const epsjoin::join_stats stats =
      run_device_join(queries, data, eps, include_self, settings, sink);
  const epsjoin::device_csr& t = sink.table();
  // Both arrays hold the table's owner; the device memory goes with the last of them.
  nb::capsule owner = owner_of(std::make_unique<std::shared_ptr<void>>(t.owner));
  return nb::make_tuple(
      device_array(reinterpret_cast<std::int64_t*>(t.offsets), t.n_queries + 1, t.device, owner),
      device_array(reinterpret_cast<std::int32_t*>(t.neighbors), t.n_pairs, t.device, owner),
      stats_dict(stats));
}

nb::tuple device_neighbor_counts(device_points queries, std::optional<device_points> data,
                                 double eps, bool include_self, bool per_row,
                                 const run_settings& settings) {
  epsjoin::count_sink sink(per_row);
  const epsjoin::join_stats stats =
      run_device_join(queries, data, eps, include_self, settings, sink);
  return counts_result(sink, per_row, queries.shape(0), stats);
}

}  // namespace epsjoin_python
