// count_radii: per-query neighbour counts within several radii from one join
// (epsjoin::count_within_radii), GIL released, Ctrl-C heard.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <epsjoin/radii.hpp>

#include "join_calls.hpp"
#include "owned_array.hpp"
#include "released_call.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

nb::tuple neighbor_counts_radii(points_array queries, std::optional<points_array> data,
                                nb::ndarray<nb::ro, double, nb::ndim<1>, nb::c_contig> radii,
                                bool include_self, const run_settings& s) {
  // eps is count_within_radii's: the largest radius.
  const epsjoin::join_options options = options_of(s, 0.0, include_self);
  const std::vector<double> r(radii.data(), radii.data() + radii.shape(0));
  const epsjoin::dataset_view a = view_of(queries);
  epsjoin::radii_counts out = run_released(s, [&](epsjoin::resources& res) {
    return data ? epsjoin::count_within_radii(res, a, view_of(*data), options, r)
                : epsjoin::count_within_radii(res, a, options, r);
  });
  auto per_query = std::make_unique<std::vector<std::uint32_t>>(std::move(out.per_query));
  auto totals = std::make_unique<std::vector<std::uint64_t>>(std::move(out.totals));
  std::uint32_t* p = per_query->data();
  std::uint64_t* t = totals->data();
  const std::size_t n = a.n, k = r.size();
  nb::object rows = numpy_view(p, {n, k}, owner_of(std::move(per_query)));
  nb::object sums = numpy_view(t, {k}, owner_of(std::move(totals)));
  return nb::make_tuple(rows, sums, stats_dict(out.stats));
}

}  // namespace epsjoin_python
