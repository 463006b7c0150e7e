// super-ego: SUPER-EGO (Kalashnikov) as NEW-SUPER-EGO (dissertation 000, sec. 4.3.2 and 4.4.5)
// improved it. Dimensions reordered by selectivity, points EGO-sorted in parallel (stable),
// then threads take chunks of EGO-sorted queries from one shared counter (the work queue that
// replaced SUPER-EGO's producer-consumer scheme) and join each chunk recursively against the
// indexed points. float32 or float64 arithmetic, whatever the input type.

// The 32-byte vector helpers are always inlined into the AVX2 leaf loops, but GCC still notes at
// the end of this unit, where they are instantiated, that returning them without AVX would
// change the ABI (-Wpsabi). No such call exists.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>

#include "base/expects.hpp"
#include "base/float_band.hpp"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/progress.hpp"
#include "base/static_dim.hpp"
#include "base/timer.hpp"
#include "core/builtin_engines.hpp"
#include "core/delivery.hpp"
#include "core/row_cursors.hpp"
#include "cpu/super_ego/dim_order.hpp"
#include "cpu/super_ego/ego_join.hpp"
#include "cpu/super_ego/ego_output.hpp"
#include "cpu/super_ego/ego_prepare.hpp"
#include "cpu/super_ego/parallel_sort.hpp"

namespace epsjoin::detail {

namespace {

using namespace ego;

// Engine parameters (join_options::params); defaults are the fastest measured, on Expo2D and
// Expo4D with 1e6 points and Expo16D with 1e5 points (exponential, lambda 40), S ~ 100.
struct super_ego_params final : engine_params {
  // leaf: parts of at most this many points are joined by brute force. 0 (the default) picks
  // 128 in up to 8 dimensions and 256 above: fastest measured on Expo2D/4D 1e6 (64-128 within
  // 3% of each other) and Expo16D 1e5 (256; 128 was 6% and 64 25% slower).
  std::size_t leaf = 0;
  // chunk: at most this many EGO-sorted queries per work-queue item (a part of the partition
  // tree, so items are whole parts). 256 to 16384 measured within 3% on Expo2D 1e6.
  std::size_t chunk = 1024;
  // reorder: selectivity (the dissertation's histogram rule), variance (paper 002), off.
  reorder_rule reorder = reorder_rule::selectivity;
  // sort: radix (keys radix-sorted, ties by later dimensions) or merge (parallel merge sort).
  sort_method sort = sort_method::radix;
  // prune: box (bounding boxes of parts, and of leaves per query) or ego (SUPER-EGO's rule on
  // the cells of each part's first and last point only).
  prune_rule prune = prune_rule::box;
  // simd: on (32-byte vectors in the leaf loops where the CPU has AVX2 and FMA, else 16-byte)
  // or off (16-byte vectors only, the x86-64 baseline).
  bool simd = true;
};

std::size_t parse_size(const std::string& key, const std::string& text, std::size_t lo,
                       std::size_t hi) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  EPSJOIN_EXPECTS(ec == std::errc() && end == text.data() + text.size() && value >= lo &&
                      value <= hi,
                  "super-ego: parameter ", key, " must be an integer in [", lo, ", ", hi,
                  "], got '", text, "'");
  return value;
}

// super-ego's messages predate the shared readers, so each key is declared through
// reader.text and checked here.
std::unique_ptr<const engine_params> read_super_ego_params(param_reader& r) {
  using kind = param_kind;
  auto p = std::make_unique<super_ego_params>();
  if (const std::string* v = r.text("leaf", kind::tuning,
                                    "1 to 65536: brute force below this many points a side "
                                    "(default 128 up to 8 dimensions, 256 above)")) {
    p->leaf = parse_size("leaf", *v, 1, std::size_t{1} << 16);
  }
  if (const std::string* v = r.text("chunk", kind::tuning,
                                    "queries per work-queue chunk (default 1024)")) {
    p->chunk = parse_size("chunk", *v, 1, std::size_t{1} << 31);
  }
  if (const std::string* v = r.text("reorder", kind::ablation,
                                    "selectivity | variance | off: dimension order rule")) {
    if (*v == "selectivity" || *v == "on") {
      p->reorder = reorder_rule::selectivity;
    } else if (*v == "variance") {
      p->reorder = reorder_rule::variance;
    } else {
      EPSJOIN_EXPECTS(*v == "off", "super-ego: reorder must be selectivity, variance or "
                                   "off, got '", *v, "'");
      p->reorder = reorder_rule::off;
    }
  }
  if (const std::string* v = r.text("sort", kind::ablation,
                                    "radix | merge: how points are EGO-sorted")) {
    EPSJOIN_EXPECTS(*v == "radix" || *v == "merge",
                    "super-ego: sort must be radix or merge, got '", *v, "'");
    p->sort = *v == "radix" ? sort_method::radix : sort_method::merge;
  }
  if (const std::string* v = r.text("prune", kind::ablation,
                                    "box | ego: bounding boxes of parts, or SUPER-EGO's rule")) {
    EPSJOIN_EXPECTS(*v == "box" || *v == "ego",
                    "super-ego: prune must be box or ego, got '", *v, "'");
    p->prune = *v == "box" ? prune_rule::box : prune_rule::ego;
  }
  if (const std::string* v = r.text("simd", kind::ablation,
                                    "on | off: 32-byte vectors where the CPU has AVX2, or "
                                    "16-byte only")) {
    EPSJOIN_EXPECTS(*v == "on" || *v == "off",
                    "super-ego: simd must be on or off, got '", *v, "'");
    p->simd = *v == "on";
  }
  return p;
}

template <class T, int D, class Out, class MakeOut>
join_counters join_all(join_request& req, const join_inputs<T>& in, const super_ego_params& p,
                       MakeOut make_out) {
  const unsigned threads = req.res.threads();
  std::vector<Out> outs;
  std::vector<join_counters> counters(threads);
  outs.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) outs.push_back(make_out());
  std::vector<ego_joiner<T, D, Out>> joiners;
  joiners.reserve(threads);
  const bool wide = p.simd && isa::cpu_has_v3();
  for (unsigned t = 0; t < threads; ++t) {
    joiners.emplace_back(in, p.leaf, outs[t], counters[t], wide);
  }
  // The work queue: parts of about `chunk` EGO-sorted queries, handed out in EGO order from one
  // atomic counter, each joined against all of B (in a self-join, the j > i half of it).
  const std::vector<std::uint32_t> items = work_items(in.tree_a, p.chunk);
  parallel_for(
      threads, items.size(), 1,
      [&](std::size_t k0, std::size_t k1, unsigned w) {
        for (std::size_t k = k0; k < k1; ++k) {
          const auto& part = in.tree_a.nodes[items[k]];
          outs[w].begin_chunk(part.begin, part.end);
          joiners[w].join(items[k], 0);
          outs[w].end_chunk();
        }
      },
      req.options.progress);
  join_counters total;
  for (unsigned t = 0; t < threads; ++t) {
    outs[t].flush();
    total.candidates += counters[t].candidates;
    total.nodes += counters[t].nodes;
    total.leaves += counters[t].leaves;
    total.rechecks += counters[t].rechecks;
  }
  return total;
}

// How the join's matches leave: counts, pairs, or rows written in place through `rows`.
template <class T, int D>
join_counters join_dispatch_out(join_request& req, const join_inputs<T>& in,
                                const super_ego_params& p, const row_cursors* rows) {
  if (rows != nullptr) {
    return join_all<T, D, row_output<T>>(
        req, in, p, [&] { return row_output<T>(*rows, in.a, in.b, in.self_join); });
  }
  // A self-join finds each pair once: a sink that keeps unordered pairs gets each once.
  const delivery out(req.sink, req.res.threads(), in.self_join);
  if (out.form() == delivery_form::counts) {
    return join_all<T, D, count_output<T>>(req, in, p, [&] {
      return count_output<T>(req.sink, in.a, in.b, in.self_join,
                             std::min(std::max(p.chunk, p.leaf), in.a.n),
                             p.leaf);
    });
  }
  return join_all<T, D, pair_output<T>>(req, in, p, [&] {
    return pair_output<T>(req.sink, in.a, in.b, in.self_join, p.leaf, out.pairs_once());
  });
}

template <class T>
join_counters join_dispatch(join_request& req, const join_inputs<T>& in,
                            const super_ego_params& p, const row_cursors* rows = nullptr) {
  return with_static_dim<8>(in.a.d,
                            [&]<int D>() { return join_dispatch_out<T, D>(req, in, p, rows); });
}

// A sink that takes rows: count into a table by query, lay the rows out, then join again over
// the same index writing them in place (each self-join pair once, into both rows).
template <class T>
join_counters join_rows(join_request& req, const join_inputs<T>& in, const super_ego_params& p) {
  const unsigned threads = std::max(1u, req.res.threads());
  stopwatch clock;
  const host_charge counted = req.budget.charge_host(
      req.queries.n * sizeof(std::uint64_t), "the counts");
  count_sink per_query(true);
  per_query.begin({req.queries.n, req.data.n, req.self_join, false});
  const auto shown = std::make_shared<std::atomic<double>>(0.0);
  join_options count_options = req.options;
  count_options.progress = progress_span(req.options.progress, 0, count_pass_share, shown);
  join_request count_req{req.res,   req.queries, req.data,   req.self_join, count_options,
                         per_query, req.stats,   req.budget, req.params};
  join_counters total = join_dispatch<T>(count_req, in, p);
  per_query.finish();
  // A query has fewer neighbours than there are points, and ids are 32-bit.
  host_charge by_query_charge =
      req.budget.charge_host(req.queries.n * sizeof(std::uint32_t), "the counts by query");
  std::vector<std::uint32_t> by_query(per_query.per_point().begin(), per_query.per_point().end());
  const host_charge by_position_charge =
      req.budget.charge_host(in.a.n * sizeof(std::uint32_t), "the counts by position");
  std::vector<std::uint32_t> by_position(in.a.n);
  parallel_for(threads, in.a.n, std::size_t{1} << 16,
               [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t i = begin; i < end; ++i) by_position[i] = by_query[in.a.ids[i]];
  });
  req.stats.add_stage("count", clock.seconds());
  clock.restart();
  delivery out(req.sink, threads);
  const row_destination dest = out.lay_out(by_query);
  by_query = {};
  by_query_charge = {};
  const host_charge cursors = req.budget.charge_host(row_cursors::bytes_for(in.a.n),
                                                     "the row cursors");
  const row_cursors rows(dest, std::span<const std::uint32_t>(in.a.ids.data(), in.a.n),
                         threads > 1, threads);
  req.stats.add_stage("rows", clock.seconds());
  clock.restart();
  join_options fill_options = req.options;
  fill_options.progress = progress_span(req.options.progress, count_pass_share, 1, shown);
  join_request fill_req{req.res,  req.queries, req.data,   req.self_join, fill_options,
                        req.sink, req.stats,   req.budget, req.params};
  const join_counters filled = join_dispatch<T>(fill_req, in, p, &rows);
  rows.check_complete(by_position);
  req.stats.add_stage("fill", clock.seconds());
  total.candidates += filled.candidates;
  total.nodes += filled.nodes;
  total.leaves += filled.leaves;
  total.rechecks += filled.rechecks;
  return total;
}

// Host bytes of a point set the caller holds (none on a device).
std::uint64_t points_bytes(const dataset_view& v) {
  if (v.on_device()) return 0;
  return std::uint64_t{v.n} * v.d * size_of(v.type);
}

// super-ego's memory beside its result, phase by phase: the caller's points throughout; the
// copies in the computation's type, each sorted into EGO order (its sort keys and their radix
// scratch, 16 bytes each, then a second copy while it is gathered, beside its columns); then
// both sets (rows, columns, ids) with the counts and row cursors of a rows sink.
template <class T>
struct ego_memory {
  std::uint64_t values_a, values_b, set_a, set_b, sort_a, sort_b, rows_peak, counts, cursors;

  ego_memory(const join_request& req, std::size_t d) {
    const std::uint64_t na = req.queries.n, nb = req.self_join ? 0 : req.data.n;
    const std::uint64_t t = sizeof(T);
    values_a = na * d * t;
    values_b = nb * d * t;
    // rows, columns (padded) and ids once sorted
    set_a = 2 * values_a + (na > 0 ? simd_pad * d * t : 0) + na * sizeof(std::uint32_t);
    set_b = 2 * values_b + (nb > 0 ? simd_pad * d * t : 0) + nb * sizeof(std::uint32_t);
    // Keys and their scratch with the order they give, or the order, the new rows, the
    // columns and the ids beside the old rows, whichever is more.
    auto sort_extra = [](std::uint64_t n, std::uint64_t set) {
      return std::max(n * (2 * sizeof(key_index) + sizeof(std::uint32_t)),
                      set + n * sizeof(std::uint32_t));
    };
    sort_a = sort_extra(na, set_a);
    sort_b = sort_extra(nb, set_b);
    const delivery out(req.sink, 1, req.self_join);
    counts = cursors = rows_peak = 0;
    if (out.form() == delivery_form::rows) {
      // The counts a query (8 bytes) and by position (4) stay to the end; the counts by query
      // (4) beside them until the rows are laid out, then the cursors (8) in their place.
      counts = na * (sizeof(std::uint64_t) + sizeof(std::uint32_t));
      cursors = row_cursors::bytes_for(na);
      rows_peak = counts + std::max<std::uint64_t>(na * sizeof(std::uint32_t), cursors);
    }
  }
};

template <class T>
void run_typed(join_request& req, const super_ego_params& p) {
  const unsigned threads = req.res.threads();
  stopwatch clock;
  // The caller's points are held throughout; the path's peak is required of the budget before
  // the first copy, and each part charged as it is made. A count of the pairs is charged but
  // never refused (its output recomputes nothing it could not hold).
  const std::uint64_t given = points_bytes(req.queries) +
                              (req.self_join ? 0 : points_bytes(req.data));
  const host_charge given_charge = req.budget.account_host(given);
  const bool bounded = !req.sink.request().counts_only();
  const ego_memory<T> m(req, req.queries.n > 0 ? req.queries.d : req.data.d);
  if (bounded) {
    const std::uint64_t sorting_a = m.values_a + m.values_b + m.sort_a;
    const std::uint64_t sorting_b = m.set_a + m.values_b + m.sort_b;
    const std::uint64_t joining = m.set_a + m.set_b + m.rows_peak;
    std::vector<host_need> needs{{"the points given", given}};
    if (std::max(sorting_a, sorting_b) > joining) {
      needs.push_back({"sorting the points into EGO order", std::max(sorting_a, sorting_b)});
    } else {
      needs.push_back({"the points in EGO order", m.set_a + m.set_b});
      needs.push_back({"the counts", m.counts});
      needs.push_back({"the row cursors", m.cursors});
    }
    req.budget.require_path(needs, given);
  }
  auto charge = [&](std::uint64_t bytes, const char* what) {
    return bounded ? req.budget.charge_host(bytes, what) : req.budget.account_host(bytes);
  };
  const std::vector<std::size_t> order =
      dimension_order(req.queries, req.data, req.options.eps, p.reorder, threads);
  host_charge values = charge(m.values_a + m.values_b, "the points in EGO order");
  prepared<T> prep = prepare_points<T>(req.queries, req.data, req.self_join, order,
                                       req.options.eps, threads);

  const double eps2 = req.options.eps * req.options.eps;
  auto eps2_t = static_cast<T>(eps2);
  T band_hi = eps2_t;
  double radius = req.options.eps;
  const exact_check exact{req.queries, req.self_join ? req.queries : req.data, eps2};
  if constexpr (std::is_same_v<T, float>) {
    // float32 decides as float64 does (DESIGN.md, numerics): sums at most lo are hits, those up
    // to hi are re-checked from the caller's points. The grid and the boxes are built for the
    // radius of hi, so no pair the band may hold is pruned.
    const cpu::thresholds<float> t =
        cpu::float_thresholds(req.options.eps, prep.a.d, prep.rounding, prep.rounding);
    eps2_t = t.lo;
    band_hi = t.hi;
    radius = std::sqrt(static_cast<double>(t.hi));
    prep.geometry = make_grid(radius, prep.lower, prep.upper);
  } else {
    // float64 sums in the tree's order of dimensions, fused where the CPU has FMA, lie within
    // a few ulps of the oracle's: the candidates in that band are decided as it decides them,
    // so a pair at exactly eps is in or out as the oracle says (base/float_band.hpp).
    const cpu::thresholds<double> t = cpu::double_thresholds(req.options.eps, prep.a.d);
    eps2_t = t.lo;
    band_hi = t.hi;
    radius = std::sqrt(t.hi);
    prep.geometry = make_grid(radius, prep.lower, prep.upper);
  }
  req.stats.add_stage("prepare", clock.seconds());

  clock.restart();
  host_charge sets;
  {
    // The sort's scratch while it runs (set A's, the larger of the two in turn); then each set
    // as it stays: rows, columns and ids.
    const host_charge sorting = charge(std::max(m.sort_a, m.sort_b + m.set_a - m.values_a),
                                       "sorting the points into EGO order");
    index_points(prep, p.sort, threads);
  }
  values = {};
  sets = charge(m.set_a + m.set_b, "the points in EGO order");
  const sorted_points<T>& a = prep.a;
  const sorted_points<T>& b = req.self_join ? prep.a : prep.b;
  const ego_tree<T> tree_a = build_tree(a, prep.geometry, p.leaf, threads);
  const ego_tree<T> tree_b = req.self_join ? ego_tree<T>{} : build_tree(b, prep.geometry, p.leaf,
                                                                        threads);
  req.stats.add_stage("index", clock.seconds());

  clock.restart();
  const join_inputs<T> in{a,
                          tree_a,
                          b,
                          req.self_join ? tree_a : tree_b,
                          prep.geometry,
                          eps2_t,
                          radius * radius * (1.0 + 0x1p-20),
                          p.prune,
                          req.self_join,
                          &exact,
                          band_hi};
  join_counters c;
  if (delivery(req.sink, threads, req.self_join).form() == delivery_form::rows) {
    c = join_rows<T>(req, in, p);
  } else {
    c = join_dispatch<T>(req, in, p);
    req.stats.add_stage("execute", clock.seconds());
  }
  req.stats.candidates = c.candidates;

  std::string dims;
  for (std::size_t k = 0; k < order.size() && k < 16; ++k) {
    if (k > 0) dims += ',';
    dims += std::to_string(order[k]);
  }
  if (order.size() > 16) dims += ",...";
  req.stats.notes.emplace_back("dimension order", dims);
  req.stats.notes.emplace_back("leaf, chunk", std::to_string(p.leaf) + ", " +
                                                  std::to_string(p.chunk));
  req.stats.notes.emplace_back("recursion nodes", std::to_string(c.nodes));
  req.stats.notes.emplace_back("leaf joins", std::to_string(c.leaves));
  if (std::is_same_v<T, float>) {
    req.stats.notes.emplace_back("float64 re-checks", std::to_string(c.rechecks));
  }
  req.stats.notes.emplace_back("leaf vectors", p.simd && isa::cpu_has_v3() ? "32-byte (AVX2)"
                                                                         : "16-byte");
}

class super_ego final : public engine {
 public:
  std::string_view name() const override { return "super-ego"; }
  std::string_view processor() const override { return "cpu"; }
  std::string_view description() const override {
    return "SUPER-EGO as NEW-SUPER-EGO: dimension reordering, parallel EGO sort, recursive "
           "EGO join with a shared work queue; multithreaded";
  }
  // A sink that takes rows gets them from super-ego's own two passes over one index (count,
  // then each pair found once and written into both its rows), not from dispatch's.
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    return read_super_ego_params(reader);
  }
  void run(join_request& req) const override {
    // A copy: the leaf's default depends on the data's dimension.
    super_ego_params p = req.params_as<super_ego_params>();
    if (p.leaf == 0) p.leaf = req.queries.d <= 8 ? 128 : 256;
    if (req.options.precision == scalar_type::f32) {
      run_typed<float>(req, p);
    } else {
      run_typed<double>(req, p);
    }
  }
};

}  // namespace

std::unique_ptr<engine> make_super_ego_engine() { return std::make_unique<super_ego>(); }

}  // namespace epsjoin::detail
