// The 32-byte vector helpers are always inlined into the AVX2 leaf loops (see super_ego.cpp).
#pragma GCC diagnostic ignored "-Wpsabi"

#include "cpu/super_ego/ego_chunks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/cpu_isa.hpp"
#include "base/expects.hpp"
#include "base/static_dim.hpp"
#include "base/timer.hpp"
#include "cpu/super_ego/dim_order.hpp"
#include "cpu/super_ego/ego_join.hpp"
#include "cpu/super_ego/ego_prepare.hpp"
#include "cpu/super_ego/ego_tree.hpp"

namespace epsjoin::detail::ego {

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
  sorted_points<T> queries;
  hit_collector hits;
  std::vector<std::size_t> row_start;
  std::vector<std::uint32_t> grouped;
};

template <class T, int D>
std::uint64_t join_chunk(const join_inputs<T>& in, std::size_t leaf, bool wide,
                         hit_collector& hits) {
  join_counters counters;
  ego_joiner<T, D, hit_collector> joiner(in, leaf, hits, counters, wide);
  joiner.join(0, 0);
  return counters.candidates;
}

template <class T>
std::uint64_t join_chunk_any_d(const join_inputs<T>& in, std::size_t leaf, bool wide,
                               hit_collector& hits) {
  return with_static_dim<8>(
      in.a.d, [&]<int D>() { return join_chunk<T, D>(in, leaf, wide, hits); });
}

}  // namespace

template <class T>
struct chunk_index<T>::state {
  std::vector<std::size_t> order;  ///< order[k]: the caller's dimension placed k-th
  prepared<T> prep;
  ego_tree<T> tree;                 ///< over the data (prep.a in a self-join, else prep.b)
  std::vector<std::uint32_t> rank;  ///< query position -> its place in prep.a's EGO order
  std::size_t leaf = 0, query_leaf = 0;
  bool self = false, wide = false;
  T filter = 0;          ///< the leaves' eps^2, widened (see build)
  double box_limit = 0;  ///< the box test's, widened once more
  double seconds = 0;    ///< to build all this
  const sorted_points<T>& data() const { return self ? prep.a : prep.b; }
};

template <class T>
std::unique_ptr<chunk_index<T>> chunk_index<T>::build(dataset_view queries, dataset_view data,
                                                      bool self_join, T eps2,
                                                      const settings& how, unsigned threads,
                                                      const std::function<bool()>& wanted) {
  stopwatch clock;
  auto built = std::make_unique<state>();
  state& ix = *built;
  const std::size_t d = queries.d;
  EPSJOIN_EXPECTS(d > 0, "the super-ego side needs at least one dimension");
  ix.self = self_join;
  ix.leaf = how.leaf > 0 ? how.leaf : (d <= 8 ? 128 : 256);
  ix.query_leaf = std::max<std::size_t>(how.query_leaf, 1);
  ix.wide = isa::cpu_has_v3();
  // The leaves test against eps^2 widened by twice the bound on a d-term sum's relative rounding
  // error, (d + 1) u, with room to spare; the caller's confirmation then decides exactly. The
  // boxes and the grid (cells a hair wider than their radius, see ego::grid) are built for the
  // widened radius.
  const double u = std::numeric_limits<T>::epsilon();
  ix.filter = std::nextafter(
      static_cast<T>(static_cast<double>(eps2) * (1 + 4.0 * static_cast<double>(d + 2) * u)),
      std::numeric_limits<T>::infinity());
  ix.box_limit = static_cast<double>(ix.filter) * (1 + 0x1p-20);
  const double radius = std::sqrt(ix.box_limit);

  if (ix.self) data = queries;
  ix.order = dimension_order(queries, data, radius, reorder_rule::selectivity, threads);
  ix.prep = prepare_points<T>(queries, data, ix.self, ix.order, radius, threads);
  if (!wanted()) return nullptr;
  index_points(ix.prep, sort_method::radix, threads);
  if (!wanted()) return nullptr;
  ix.tree = build_tree(ix.data(), ix.prep.geometry, ix.leaf, threads);
  ix.rank.resize(ix.prep.a.n);
  for (std::size_t r = 0; r < ix.prep.a.n; ++r) {
    ix.rank[ix.prep.a.ids[r]] = static_cast<std::uint32_t>(r);
  }
  ix.seconds = clock.seconds();
  return std::unique_ptr<chunk_index>(new chunk_index(std::move(built)));
}

template <class T>
chunk_index<T>::chunk_index(std::unique_ptr<state> built) : state_(std::move(built)) {}

template <class T>
chunk_index<T>::~chunk_index() = default;

template <class T>
std::uint64_t chunk_index<T>::join(std::span<const std::uint32_t> positions,
                                   const row_appender& out) const {
  static thread_local chunk_scratch<T> s;
  const state& ix = *state_;
  const std::size_t d = ix.prep.a.d;
  // The chunk's queries in EGO order, their query positions as ids.
  s.ranks.clear();
  for (const std::uint32_t p : positions) s.ranks.push_back(ix.rank[p]);
  std::sort(s.ranks.begin(), s.ranks.end());
  const std::size_t m = s.ranks.size();
  if (m == 0) return 0;
  sorted_points<T>& q = s.queries;
  q.n = m;
  q.d = d;
  q.values.resize(m * d);
  q.ids.resize(m);
  for (std::size_t r = 0; r < m; ++r) {
    std::copy_n(ix.prep.a.row(s.ranks[r]), d, q.values.data() + r * d);
    q.ids[r] = ix.prep.a.ids[s.ranks[r]];
  }
  const ego_tree<T> tree = build_tree(q, ix.prep.geometry, ix.query_leaf, 1);
  const sorted_points<T>& data = ix.data();
  s.hits.query.clear();
  s.hits.found.clear();
  std::uint64_t distances = 0;
  if (data.n > 0) {
    const join_inputs<T> in{q,           tree,         data,           ix.tree, ix.prep.geometry,
                            ix.filter,   ix.box_limit, prune_rule::box, false};
    distances = join_chunk_any_d(in, ix.leaf, ix.wide, s.hits);
  }

  // Hits grouped by query, mapped to data positions, appended as rows.
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
    out.neighbors.resize(at + kept);
    out.positions.push_back(pos);
    out.counts.push_back(static_cast<std::uint32_t>(kept));
  }
  return distances;
}

template <class T>
std::string chunk_index<T>::describe() const {
  const state& ix = *state_;
  std::string dims;
  for (std::size_t k = 0; k < ix.order.size() && k < 16; ++k) {
    dims += concat(k > 0 ? "," : "", ix.order[k]);
  }
  if (ix.order.size() > 16) dims += ",...";
  return concat("super-ego (leaf ", ix.leaf, ", query leaf ", ix.query_leaf, ", dimension order ",
                dims, ", EGO index built in ", ix.seconds, " s)");
}

template class chunk_index<float>;
template class chunk_index<double>;

}  // namespace epsjoin::detail::ego
