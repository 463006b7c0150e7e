// The 32-byte vector helpers are always inlined into the AVX2 leaf loops (see super_ego.cpp).
#pragma GCC diagnostic ignored "-Wpsabi"

#include "hetero/cpu_ego.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/expects.hpp"
#include "base/static_dim.hpp"
#include "base/timer.hpp"
#include "cpu/super_ego/dim_order.hpp"
#include "cpu/super_ego/ego_join.hpp"
#include "cpu/super_ego/ego_prepare.hpp"
#include "cpu/super_ego/ego_tree.hpp"

namespace epsjoin::detail::hetero {

namespace {

/// The EGO join's hits for one chunk, as (chunk position, index position) pairs: a query's
/// hits arrive leaf by leaf, so they are grouped by query afterwards.
struct hit_collector {
  static constexpr bool counts = false;
  std::vector<std::uint32_t> query, found;
  void begin_leaf(std::size_t, std::size_t) {}
  void end_leaf() {}
  void row(std::size_t i, const std::uint32_t* js, std::size_t m) {
    query.insert(query.end(), m, static_cast<std::uint32_t>(i));
    found.insert(found.end(), js, js + m);
  }
};

/// A worker's buffers, kept from chunk to chunk.
template <class T>
struct chunk_scratch {
  std::vector<std::uint32_t> ranks;
  ego::sorted_points<T> queries;
  hit_collector hits;
  std::vector<std::size_t> row_start;
  std::vector<std::uint32_t> grouped;
};

template <class T, int D>
std::uint64_t join_chunk(const ego::join_inputs<T>& in, std::size_t leaf, bool wide,
                         hit_collector& hits) {
  ego::join_counters counters;
  ego::ego_joiner<T, D, hit_collector> joiner(in, leaf, hits, counters, wide);
  joiner.join(0, 0);
  return counters.candidates;
}

template <class T>
std::uint64_t join_chunk_any_d(const ego::join_inputs<T>& in, std::size_t leaf, bool wide,
                               hit_collector& hits) {
  return with_static_dim<8>(
      in.a.d, [&]<int D>() { return join_chunk<T, D>(in, leaf, wide, hits); });
}

template <class T>
constexpr scalar_type scalar_of() {
  return std::is_same_v<T, float> ? scalar_type::f32 : scalar_type::f64;
}

}  // namespace

template <class T>
struct ego_side<T>::index {
  std::vector<std::size_t> order;  ///< order[k]: the view's dimension placed k-th
  ego::prepared<T> prep;
  ego::ego_tree<T> tree;            ///< over the data (prep.a in a self-join, else prep.b)
  std::vector<std::uint32_t> rank;  ///< query position -> its place in prep.a's EGO order
  std::size_t leaf = 0, query_leaf = 0;
  bool self = false, wide = false;
  T filter = 0;          ///< the leaves' eps^2, widened (see the constructor)
  double box_limit = 0;  ///< the box test's, widened once more
  double seconds = 0;    ///< to build all this
  const ego::sorted_points<T>& data() const { return self ? prep.a : prep.b; }
};

template <class T>
std::unique_ptr<ego_side<T>> ego_side<T>::build(const host_join_view<T>& view,
                                                const ego_settings& settings, unsigned threads,
                                                const std::function<bool()>& wanted) {
  stopwatch clock;
  auto built = std::make_unique<index>();
  index& ix = *built;
  const auto d = static_cast<std::size_t>(view.d);
  EPSJOIN_EXPECTS(d > 0, "the super-ego side needs at least one dimension");
  ix.self = view.self_join;
  ix.leaf = settings.leaf > 0 ? settings.leaf : (d <= 8 ? 128 : 256);
  ix.query_leaf = std::max<std::size_t>(settings.query_leaf, 1);
  ix.wide = isa::cpu_has_v3();
  // The EGO leaves round their sums their own way (another dimension order, no fused
  // multiply-add in the 16-byte loops), so they test against eps^2 widened by twice the bound
  // on a d-term sum's relative rounding error, (d + 1) u, with room to spare; the confirmed
  // hits are then exactly the grid side's. The boxes and the grid (cells a hair wider than
  // their radius, see ego::grid) are built for the widened radius.
  const double u = std::numeric_limits<T>::epsilon();
  ix.filter = std::nextafter(
      static_cast<T>(static_cast<double>(view.eps2) * (1 + 4.0 * static_cast<double>(d + 2) * u)),
      std::numeric_limits<T>::infinity());
  ix.box_limit = static_cast<double>(ix.filter) * (1 + 0x1p-20);
  const double radius = std::sqrt(ix.box_limit);

  const dataset_view queries{view.query_points.data(), view.query_ids.size(), d, scalar_of<T>()};
  const dataset_view data =
      ix.self ? queries
              : dataset_view{view.data_points.data(), view.data_ids.size(), d, scalar_of<T>()};
  ix.order = ego::dimension_order(queries, data, radius, ego::reorder_rule::selectivity, threads);
  ix.prep = ego::prepare_points<T>(queries, data, ix.self, ix.order, radius, threads);
  if (!wanted()) return nullptr;
  ego::index_points(ix.prep, ego::sort_method::radix, threads);
  if (!wanted()) return nullptr;
  ix.tree = ego::build_tree(ix.data(), ix.prep.geometry, ix.leaf, threads);
  ix.rank.resize(ix.prep.a.n);
  for (std::size_t r = 0; r < ix.prep.a.n; ++r) {
    ix.rank[ix.prep.a.ids[r]] = static_cast<std::uint32_t>(r);
  }
  ix.seconds = clock.seconds();
  return std::unique_ptr<ego_side>(new ego_side(view, std::move(built)));
}

template <class T>
ego_side<T>::ego_side(const host_join_view<T>& view, std::unique_ptr<index> built)
    : view_(view), index_(std::move(built)) {}

template <class T>
ego_side<T>::~ego_side() = default;

template <class T>
void ego_side<T>::join_items(std::uint32_t first, std::uint32_t end, cpu_rows& out) const {
  static thread_local chunk_scratch<T> s;
  const index& ix = *index_;
  const std::size_t d = ix.prep.a.d;
  // The chunk's queries in EGO order, their query positions as ids.
  s.ranks.clear();
  for (std::uint32_t i = first; i < end; ++i) {
    const host_item& item = view_.items[i];
    for (std::uint32_t p = item.first; p < item.first + item.count; ++p) {
      s.ranks.push_back(ix.rank[p]);
    }
  }
  std::sort(s.ranks.begin(), s.ranks.end());
  const std::size_t m = s.ranks.size();
  if (m == 0) return;
  ego::sorted_points<T>& q = s.queries;
  q.n = m;
  q.d = d;
  q.values.resize(m * d);
  q.ids.resize(m);
  for (std::size_t r = 0; r < m; ++r) {
    std::copy_n(ix.prep.a.row(s.ranks[r]), d, q.values.data() + r * d);
    q.ids[r] = ix.prep.a.ids[s.ranks[r]];
  }
  const ego::ego_tree<T> tree = ego::build_tree(q, ix.prep.geometry, ix.query_leaf, 1);
  const ego::sorted_points<T>& data = ix.data();
  s.hits.query.clear();
  s.hits.found.clear();
  if (data.n > 0) {
    const ego::join_inputs<T> in{
        q,    tree, data, ix.tree, ix.prep.geometry, ix.filter, ix.box_limit, ego::prune_rule::box,
        false};
    out.distances += join_chunk_any_d(in, ix.leaf, ix.wide, s.hits);
  }

  // Hits grouped by query, mapped to data positions, confirmed, appended as rows.
  s.row_start.assign(m + 1, 0);
  for (const std::uint32_t i : s.hits.query) ++s.row_start[i + 1];
  for (std::size_t i = 0; i < m; ++i) s.row_start[i + 1] += s.row_start[i];
  s.grouped.resize(s.hits.found.size());
  for (std::size_t h = 0; h < s.hits.found.size(); ++h) {
    s.grouped[s.row_start[s.hits.query[h]]++] = s.hits.found[h];
  }
  // row_start[i] is now where row i + 1 starts.
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint32_t pos = q.ids[i];
    const std::size_t from = i == 0 ? 0 : s.row_start[i - 1];
    const std::size_t to = s.row_start[i];
    const std::size_t at = out.neighbors.size();
    out.neighbors.resize(at + (to - from));
    std::uint32_t* row = out.neighbors.data() + at;
    std::size_t kept = 0;
    for (std::size_t h = from; h < to; ++h) {
      const std::uint32_t j = data.ids[s.grouped[h]];
      row[kept] = j;
      kept += ix.self && j == pos ? 0 : 1;
    }
    kept = keep_within_on_cpu(view_, pos, row, kept);
    out.neighbors.resize(at + kept);
    out.positions.push_back(pos);
    out.counts.push_back(static_cast<std::uint32_t>(kept));
  }
}

template <class T>
std::string ego_side<T>::describe() const {
  const index& ix = *index_;
  std::string dims;
  for (std::size_t k = 0; k < ix.order.size() && k < 16; ++k) {
    dims += concat(k > 0 ? "," : "", ix.order[k]);
  }
  if (ix.order.size() > 16) dims += ",...";
  return concat("super-ego (leaf ", ix.leaf, ", query leaf ", ix.query_leaf, ", dimension order ",
                dims, ", EGO index built in ", ix.seconds, " s)");
}

template class ego_side<float>;
template class ego_side<double>;

}  // namespace epsjoin::detail::hetero
