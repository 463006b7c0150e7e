// cpu-rtree: the sequential R-tree baseline of paper 001 (CPU-RTREE). Boost.Geometry's rtree,
// bulk-loaded, one box query of half-side eps per query point, exact refinement. Single-threaded
// on purpose: it is the reference the parallel engines are measured against.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "base/expects.hpp"
#include "core/builtin_engines.hpp"
#include "cpu/rtree_join.hpp"

namespace epsjoin::detail {

namespace {

using rtree_impl::max_index_dims;

/// The rows of a view in type T: borrowed when the view already holds T, converted otherwise.
template <class T>
class rows_as {
 public:
  explicit rows_as(dataset_view v) {
    constexpr scalar_type want = std::is_same_v<T, double> ? scalar_type::f64 : scalar_type::f32;
    if (v.type == want) {
      rows_ = static_cast<const T*>(v.data);
      return;
    }
    copy_.resize(v.n * v.d);
    for (std::size_t k = 0; k < copy_.size(); ++k) {
      copy_[k] = v.type == scalar_type::f64 ? static_cast<T>(static_cast<const double*>(v.data)[k])
                                            : static_cast<T>(static_cast<const float*>(v.data)[k]);
    }
    rows_ = copy_.data();
  }
  const T* get() const { return rows_; }

 private:
  std::vector<T> copy_;
  const T* rows_ = nullptr;
};

struct cpu_rtree_params final : engine_params {
  std::size_t index_dims = 0;  ///< 0: as many as the tree takes (max_index_dims), at most d
};

std::unique_ptr<const engine_params> read_cpu_rtree_params(param_reader& r) {
  auto p = std::make_unique<cpu_rtree_params>();
  const std::string* text = r.text("index_dims", param_kind::tuning,
                                   "1 to 8: dimensions the tree indexes, the widest-spread ones");
  if (text == nullptr) return p;
  std::size_t k = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), k);
  EPSJOIN_EXPECTS(
      ec == std::errc() && end == text->data() + text->size() && k >= 1 && k <= max_index_dims,
      "cpu-rtree: index_dims must be an integer from 1 to ", max_index_dims, ", got '", *text,
      "'");
  p->index_dims = k;
  return p;
}

std::size_t index_dims_param(const cpu_rtree_params& p, std::size_t d) {
  return std::min(p.index_dims == 0 ? max_index_dims : p.index_dims, d);
}

/// The k dimensions of widest spread (variance) of the indexed data, widest first, so a tree
/// over a projection still filters well when d > k. All dims, in order, when k == d.
template <class T>
std::vector<std::uint32_t> choose_dims(const T* rows, std::size_t n, std::size_t d, std::size_t k) {
  std::vector<std::uint32_t> dims(d);
  std::iota(dims.begin(), dims.end(), 0u);
  if (k == d) return dims;
  std::vector<double> mean(d, 0.0), m2(d, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) {
      // Welford's update: stable for data far from the origin (the offset shapes).
      const double x = rows[i * d + j];
      const double delta = x - mean[j];
      mean[j] += delta / static_cast<double>(i + 1);
      m2[j] += delta * (x - mean[j]);
    }
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return m2[a] > m2[b]; });
  dims.resize(k);
  return dims;
}

std::string list_dims(const std::vector<std::uint32_t>& dims) {
  std::string text;
  for (std::uint32_t k : dims) {
    if (!text.empty()) text += ',';
    text += std::to_string(k);
  }
  return text;
}

template <class T>
void run_typed(join_request& req) {
  const rows_as<T> data(req.data);
  const rows_as<T> queries(req.self_join ? dataset_view{} : req.queries);
  const std::size_t d = req.data.d;
  const std::size_t k = index_dims_param(req.params_as<cpu_rtree_params>(), d);

  rtree_impl::setup<T> s;
  s.data = data.get();
  s.queries = req.self_join ? s.data : queries.get();
  s.n_data = req.data.n;
  s.n_queries = req.queries.n;
  s.d = d;
  s.dims = choose_dims(s.data, s.n_data, d, k);
  // Widen the box by a few ulps of eps: it must keep every point the refinement in T accepts,
  // even after eps and the box corners round in T.
  const T eps_up = std::nextafter(static_cast<T>(req.options.eps), std::numeric_limits<T>::max());
  s.half_side = eps_up * (T{1} + 8 * std::numeric_limits<T>::epsilon());
  s.eps2 = static_cast<T>(req.options.eps * req.options.eps);

  req.stats.notes.emplace_back("indexed dims", list_dims(s.dims));
  rtree_impl::run(s, req);
}

class cpu_rtree final : public engine {
 public:
  std::string_view name() const override { return "cpu-rtree"; }
  std::string_view processor() const override { return "cpu"; }
  std::string_view description() const override {
    return "the R-tree baseline of paper 001: Boost.Geometry rtree (bulk-loaded, 16 entries a "
           "node), one eps-box query per point, exact refinement in the requested precision; "
           "single thread by design; indexes up to 8 dimensions (the widest-spread ones when "
           "d > 8) and refines all d";
  }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    return read_cpu_rtree_params(reader);
  }

  void run(join_request& req) const override {
    req.stats.threads = 1;  // whatever the resources hold: this engine never uses more
    if (req.options.precision == scalar_type::f32) {
      run_typed<float>(req);
    } else {
      run_typed<double>(req);
    }
  }
};

}  // namespace

std::unique_ptr<engine> make_cpu_rtree_engine() { return std::make_unique<cpu_rtree>(); }

}  // namespace epsjoin::detail
