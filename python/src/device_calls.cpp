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

/// The join into `sink`, then `finish(resources, queries, data)` on the same resources (the
/// device-side steps of the table's assembly), all with the GIL released.
template <class Sink, class Finish>
epsjoin::join_stats run_device_join(const device_points& queries,
                                    const std::optional<device_points>& data, double eps,
                                    bool include_self, const run_settings& s, Sink& sink,
                                    Finish&& finish) {
  const epsjoin::dataset_view a = device_view_of(queries);
  const epsjoin::dataset_view b = data ? device_view_of(*data) : a;
  check_same_dtype(a, b);
  if (a.device != b.device) {
    throw epsjoin::invalid_argument("the two point sets lie on different devices");
  }
  // The resources of the points' device (a GPU engine runs where they lie).
  return run_join_released(eps, include_self, on_points_device(s, a.device),
                           [&](epsjoin::resources& r, const epsjoin::join_options& o) {
                             const epsjoin::join_stats stats =
                                 data ? epsjoin::join(r, a, b, o, sink)
                                      : epsjoin::self_join(r, a, o, sink);
                             finish(r, a, b);
                             return stats;
                           });
}

/// An array over device memory that `owner` keeps alive.
template <class T, class Dims>
nb::object device_array(T* data, std::initializer_list<std::size_t> shape, int device,
                        nb::handle owner) {
  return nb::cast(nb::ndarray<T, Dims, nb::device::cuda>(data, shape.size(), shape.begin(), owner,
                                                         nullptr, nb::dtype<T>(),
                                                         nb::device::cuda::value, device));
}

template <class T>
nb::object device_vector(T* data, std::size_t n, int device, nb::handle owner) {
  return device_array<T, nb::ndim<1>>(data, {n}, device, owner);
}

/// A capsule holding `owner` (a table's or a result's device memory) for the arrays over it.
nb::capsule capsule_of(const std::shared_ptr<void>& owner) {
  return owner_of(std::make_unique<std::shared_ptr<void>>(owner));
}

}  // namespace

nb::tuple device_neighbor_table(device_points queries, std::optional<device_points> data,
                                double eps, bool include_self, bool sort, bool distances,
                                const run_settings& settings) {
  epsjoin::device_csr_sink sink;
  std::optional<epsjoin::device_array<double>> values;
  const epsjoin::join_stats stats = run_device_join(
      queries, data, eps, include_self, settings, sink,
      [&](epsjoin::resources& r, const epsjoin::dataset_view& a, const epsjoin::dataset_view& b) {
        if (distances) values = epsjoin::device_distances(r, sink.table(), a, b);
        if (sort) epsjoin::sort_device_rows(r, sink.table(), values ? &*values : nullptr);
      });
  const epsjoin::device_csr& t = sink.table();
  // Both arrays hold the table's owner; the device memory goes with the last of them.
  nb::capsule owner = capsule_of(t.owner);
  nb::object distance_array = nb::none();
  if (values) distance_array = device_vector(values->data, values->size, t.device,
                                             capsule_of(values->owner));
  return nb::make_tuple(
      device_vector(reinterpret_cast<std::int64_t*>(t.offsets), t.n_queries + 1, t.device, owner),
      device_vector(reinterpret_cast<std::int32_t*>(t.neighbors), t.n_pairs, t.device, owner),
      distance_array, stats_dict(stats));
}

nb::tuple device_neighbor_pairs(device_points queries, std::optional<device_points> data,
                                double eps, bool include_self, bool sort,
                                const run_settings& settings) {
  epsjoin::device_csr_sink sink;
  epsjoin::device_array<std::int64_t> pairs;
  const epsjoin::pair_selection which =
      data ? epsjoin::pair_selection::every_entry
           : (include_self ? epsjoin::pair_selection::neighbor_not_below
                           : epsjoin::pair_selection::neighbor_above);
  const epsjoin::join_stats stats = run_device_join(
      queries, data, eps, include_self, settings, sink,
      [&](epsjoin::resources& r, const epsjoin::dataset_view&, const epsjoin::dataset_view&) {
        if (sort) epsjoin::sort_device_rows(r, sink.table());
        pairs = epsjoin::device_pairs(r, sink.table(), which);
      });
  return nb::make_tuple(device_array<std::int64_t, nb::ndim<2>>(pairs.data, {pairs.size / 2, 2},
                                                                pairs.device,
                                                                capsule_of(pairs.owner)),
                        stats_dict(stats));
}

nb::tuple device_neighbor_counts(device_points queries, std::optional<device_points> data,
                                 double eps, bool include_self, bool per_row,
                                 const run_settings& settings) {
  epsjoin::count_sink sink(per_row);
  const epsjoin::join_stats stats = run_device_join(
      queries, data, eps, include_self, settings, sink,
      [](epsjoin::resources&, const epsjoin::dataset_view&, const epsjoin::dataset_view&) {});
  return counts_result(sink, per_row, queries.shape(0), stats);
}

}  // namespace epsjoin_python
