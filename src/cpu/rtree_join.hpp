#pragma once
// The cpu-rtree search-and-refine loop, templated on the computation type T and the number K of
// indexed dimensions (Boost.Geometry fixes a point's dimension at compile time). Included only
// by rtree_f64.cpp and rtree_f32.cpp, so the heavy Boost instantiations compile in parallel.

#include <algorithm>
#include <array>
#include <boost/geometry/algorithms/disjoint.hpp>
#include <boost/geometry/algorithms/intersects.hpp>
#include <boost/geometry/core/access.hpp>
#include <boost/geometry/core/coordinate_dimension.hpp>
#include <boost/geometry/core/coordinate_system.hpp>
#include <boost/geometry/core/coordinate_type.hpp>
#include <boost/geometry/core/cs.hpp>
#include <boost/geometry/core/tags.hpp>
#include <boost/geometry/geometries/box.hpp>
#include <boost/geometry/index/rtree.hpp>
#include <boost/iterator/function_output_iterator.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/timer.hpp"
#include "base/within_eps.hpp"
#include "core/emitter.hpp"
#include "core/engine.hpp"

namespace epsjoin::detail::rtree_impl {

/// At most this many dimensions go into the tree; the rest are only refined.
inline constexpr std::size_t max_index_dims = 8;

/// What the engine prepared for one join: rows in the computation type and the indexed dims.
template <class T>
struct setup {
  const T* queries;  // [n_queries x d, row-major]
  const T* data;     // [n_data x d, row-major]; equal to queries in a self-join
  std::size_t n_queries, n_data, d;
  std::vector<std::uint32_t> dims;  // the K indexed dimensions, in tree coordinate order
  T half_side;                      // half the side of the query box, eps rounded up
  T eps2;                           // the refinement threshold
};

/// Runs the join for K = s.dims.size() (1..max_index_dims); defined in rtree_f64/f32.cpp.
void run(const setup<double>& s, join_request& req);
void run(const setup<float>& s, join_request& req);

/// A point of the tree: K coordinates in T.
template <class T, std::size_t K>
struct point {
  std::array<T, K> c;
};

}  // namespace epsjoin::detail::rtree_impl

// Our own point type rather than Boost's registration of std::array, so no other translation
// unit can register std::array differently and break the one-definition rule.
namespace boost::geometry::traits {

template <class T, std::size_t K>
struct tag<epsjoin::detail::rtree_impl::point<T, K>> {
  using type = point_tag;
};
template <class T, std::size_t K>
struct coordinate_type<epsjoin::detail::rtree_impl::point<T, K>> {
  using type = T;
};
template <class T, std::size_t K>
struct coordinate_system<epsjoin::detail::rtree_impl::point<T, K>> {
  using type = cs::cartesian;
};
template <class T, std::size_t K>
struct dimension<epsjoin::detail::rtree_impl::point<T, K>> : boost::mpl::int_<int(K)> {};
template <class T, std::size_t K, std::size_t D>
struct access<epsjoin::detail::rtree_impl::point<T, K>, D> {
  static T get(const epsjoin::detail::rtree_impl::point<T, K>& p) { return p.c[D]; }
  static void set(epsjoin::detail::rtree_impl::point<T, K>& p, T v) { p.c[D] = v; }
};

}  // namespace boost::geometry::traits

namespace epsjoin::detail::rtree_impl {

namespace bg = boost::geometry;
namespace bgi = boost::geometry::index;

/// Packed (bulk-loaded) trees ignore the split algorithm (rstar, quadratic and linear ran
/// alike), so only the node capacity matters: on Expo2D1M at ~100 neighbours a point, 8 and 16
/// tied and 32 queried 13% slower.
using node_parameters = bgi::rstar<16>;

template <class T, std::size_t K>
class tree_join {
 public:
  using point_type = point<T, K>;
  using value = std::pair<point_type, std::uint32_t>;
  using tree = bgi::rtree<value, node_parameters>;
  using box = bg::model::box<point_type>;

  tree_join(const setup<T>& s, join_request& req)
      : s_(s), req_(req), emitter_(req.sink), full_(s.dims.size() == s.d) {}

  void run() {
    stopwatch index_clock;
    const tree t = build();
    req_.stats.add_stage("index", index_clock.seconds());

    stopwatch execute_clock;
    if (req_.self_join) {
      // Query in the packed tree's leaf order: successive queries walk the same nodes, which
      // made Expo2D1M's queries 1.8x faster than the caller's order.
      for (const value& v : t) query(t, v.second, v.first);
    } else {
      for (std::size_t i = 0; i < s_.n_queries; ++i) {
        query(t, static_cast<std::uint32_t>(i), project(s_.queries, i));
      }
    }
    emitter_.flush();
    if (req_.options.progress) req_.options.progress(1.0);
    req_.stats.candidates += candidates_;
    req_.stats.add_stage("execute", execute_clock.seconds());
  }

 private:
  point_type project(const T* rows, std::size_t i) const {
    point_type p;
    const T* row = rows + i * s_.d;
    for (std::size_t k = 0; k < K; ++k) p.c[k] = row[s_.dims[k]];
    return p;
  }

  tree build() const {
    std::vector<value> values(s_.n_data);
    for (std::size_t j = 0; j < s_.n_data; ++j) {
      values[j] = {project(s_.data, j), static_cast<std::uint32_t>(j)};
    }
    return tree(values.begin(), values.end());
  }

  void query(const tree& t, std::uint32_t qi, const point_type& q) {
    box b;
    for (std::size_t k = 0; k < K; ++k) {
      b.min_corner().c[k] = q.c[k] - s_.half_side;
      b.max_corner().c[k] = q.c[k] + s_.half_side;
    }
    const T* q_row = s_.queries + std::size_t{qi} * s_.d;
    auto refine = [&](const value& v) {
      const std::uint32_t j = v.second;
      if (req_.self_join && j == qi) return;
      ++candidates_;
      // Projected tree: the indexed dims, in the leaf entry already in cache, reject most far
      // candidates before their full row is fetched from memory.
      if (close(q, v.first) && (full_ || close(q_row, s_.data + std::size_t{j} * s_.d))) {
        emitter_.emit(qi, j);
      }
    };
    t.query(bgi::intersects(b), boost::make_function_output_iterator(std::ref(refine)));
    if (++done_ % 64 == 0) report_progress();  // a query may meet many candidates: Ctrl-C
  }

  // Over the K indexed dims: the exact test when K == d, a necessary condition otherwise.
  bool close(const point_type& a, const point_type& b) const {
    return within_eps<rounding::plain, static_cast<int>(K), 0>(a.c.data(), b.c.data(), K, s_.eps2);
  }

  // Over all d dims from the rows, stopping once a block of dims exceeds eps.
  bool close(const T* a, const T* b) const {
    return within_eps<rounding::plain, 0, 16>(a, b, s_.d, s_.eps2);
  }

  void report_progress() {
    if (!req_.options.progress || since_report_.seconds() < 0.1) return;
    req_.options.progress(static_cast<double>(done_) / static_cast<double>(s_.n_queries));
    since_report_.restart();
  }

  const setup<T>& s_;
  join_request& req_;
  pair_emitter emitter_;
  bool full_;
  std::uint64_t candidates_ = 0;
  std::size_t done_ = 0;
  stopwatch since_report_;
};

/// Dispatches the runtime number of indexed dims, 1..max_index_dims, to the compile-time K.
template <class T, std::size_t... I>
void run_any_k(const setup<T>& s, join_request& req, std::index_sequence<I...>) {
  const auto run_if_k = [&](auto k) {
    if (s.dims.size() != k.value) return false;
    tree_join<T, decltype(k)::value>(s, req).run();
    return true;
  };
  static_cast<void>((run_if_k(std::integral_constant<std::size_t, I + 1>{}) || ...));
}

template <class T>
void run_any_k(const setup<T>& s, join_request& req) {
  run_any_k(s, req, std::make_index_sequence<max_index_dims>{});
}

}  // namespace epsjoin::detail::rtree_impl
