// EpsIndex: epsjoin::eps_index (docs/index.md) for the Python package, built once and queried
// many times as scipy's cKDTree is. The build and every query run with the GIL released; queries
// hear Ctrl-C.

#include "index_calls.hpp"

#include <epsjoin/index.hpp>

#include "join_support.hpp"
#include "nearest_calls.hpp"
#include "released_call.hpp"

namespace epsjoin_python {

index_handle::index_handle(points_array data, double max_eps, unsigned finer_grids,
                           const run_settings& s) {
  epsjoin::join_options geometry;
  set_geometry(s, geometry);
  if (!geometry.box.empty()) throw epsjoin::invalid_argument("an EpsIndex takes no periodic box");
  epsjoin::index_options o;
  o.precision = precision_of(s.precision);
  o.metric = geometry.metric;
  o.angles = geometry.angles;
  o.sphere_radius = geometry.sphere_radius;
  o.params = s.params;
  o.finer_grids = finer_grids;
  const epsjoin::dataset_view points = view_of(data);
  index_ = run_released(s, [&](epsjoin::resources& res) {
    return std::make_unique<epsjoin::eps_index>(res, points, max_eps, o);
  });
}

index_handle::~index_handle() = default;

double index_handle::max_eps() const { return index_->max_eps(); }
std::size_t index_handle::n() const { return index_->n(); }
std::size_t index_handle::d() const { return index_->d(); }
std::uint64_t index_handle::memory_bytes() const { return index_->memory_bytes(); }

epsjoin::join_stats index_handle::run(const std::optional<points_array>& queries, double eps,
                                      bool include_self, const run_settings& s,
                                      epsjoin::result_sink& sink) const {
  epsjoin::query_options qo;
  qo.include_self = include_self;
  qo.progress = interrupt_check(report_of(s));
  const epsjoin::dataset_view a = queries ? view_of(*queries) : epsjoin::dataset_view{};
  return run_released(s, [&](epsjoin::resources& res) {
    return queries ? index_->query(res, a, eps, qo, sink) : index_->self_join(res, eps, qo, sink);
  });
}

nb::tuple index_handle::table(std::optional<points_array> queries, double eps, bool include_self,
                              bool sort_indices, double added_per_pair, const run_settings& s,
                              bool with_stats) const {
  epsjoin::csr_sink table(sort_indices, added_per_pair);
  const epsjoin::join_stats stats = run(queries, eps, include_self, s, table);
  return table_result(table, queries ? queries->shape(0) : n(), stats, with_stats);
}

nb::tuple index_handle::counts(std::optional<points_array> queries, double eps, bool include_self,
                               bool per_row, const run_settings& s, bool with_stats) const {
  epsjoin::count_sink sink(per_row);
  const epsjoin::join_stats stats = run(queries, eps, include_self, s, sink);
  return counts_result(sink, per_row, queries ? queries->shape(0) : n(), stats, with_stats);
}

nb::tuple index_handle::nearest(std::optional<points_array> queries, double eps, std::size_t k,
                                bool include_self, points_array data, const run_settings& s,
                                bool with_stats) const {
  const epsjoin::index_options& o = index_->options();
  epsjoin::join_options geometry;
  geometry.metric = o.metric;
  geometry.angles = o.angles;
  geometry.sphere_radius = o.sphere_radius;
  const epsjoin::dataset_view points = view_of(data);
  if (points.n != n() || points.d != d()) {
    throw epsjoin::invalid_argument("the index's nearest neighbours need the indexed points");
  }
  epsjoin::nearest_sink sink(queries ? view_of(*queries) : points, points, k, geometry);
  const epsjoin::join_stats stats = run(queries, eps, include_self, s, sink);
  return nearest_result(sink.table(), k, n(), stats, with_stats);
}

void bind_index(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<index_handle>(m, "EpsIndex")
      .def(nb::init<points_array, double, unsigned, const run_settings&>(), "data"_a,
           "max_eps"_a, "finer_grids"_a, "settings"_a)
      .def_prop_ro("max_eps", &index_handle::max_eps)
      .def_prop_ro("n", &index_handle::n)
      .def_prop_ro("d", &index_handle::d)
      .def_prop_ro("memory_bytes", &index_handle::memory_bytes)
      .def("table", &index_handle::table, "queries"_a.none(), "eps"_a, "include_self"_a,
           "sort_indices"_a, "added_per_pair"_a, "settings"_a, "with_stats"_a = true)
      .def("nearest", &index_handle::nearest, "queries"_a.none(), "eps"_a, "k"_a,
           "include_self"_a, "data"_a, "settings"_a, "with_stats"_a = true)
      .def("counts", &index_handle::counts, "queries"_a.none(), "eps"_a, "include_self"_a,
           "per_row"_a, "settings"_a, "with_stats"_a = true);
}

}  // namespace epsjoin_python
