// super-ego: SUPER-EGO (Kalashnikov) as NEW-SUPER-EGO (dissertation 000, sec. 4.3.2 and 4.4.5)
// improved it. Dimensions reordered by selectivity, points EGO-sorted in parallel (stable),
// then threads take chunks of EGO-sorted queries from one shared counter (the work queue that
// replaced SUPER-EGO's producer-consumer scheme) and join each chunk recursively against the
// indexed points. float32 or float64 arithmetic, whatever the input type.

#include <algorithm>
#include <charconv>
#include <string>

#include "core/builtin_engines.hpp"
#include "core/emitter.hpp"
#include "core/expects.hpp"
#include "core/parallel.hpp"
#include "core/timer.hpp"
#include "cpu/super_ego/dim_order.hpp"
#include "cpu/super_ego/ego_join.hpp"
#include "cpu/super_ego/ego_prepare.hpp"

namespace epsjoin::detail {

namespace {

using namespace ego;

// Engine parameters (join_options::params); defaults are the fastest measured (see bench notes
// in the commit log and the report): Expo2D/4D 1e6 points and Expo16D 1e5 points, S ~ 100.
struct super_ego_params {
  // leaf: ranges of at most this many points on both sides are joined by brute force.
  std::size_t leaf = 32;
  // chunk: EGO-sorted queries a thread takes from the work queue at a time.
  std::size_t chunk = 1024;
  // reorder: selectivity (the dissertation's histogram rule), variance (paper 002), off.
  reorder_rule reorder = reorder_rule::selectivity;
  // sort: radix (keys radix-sorted, ties by later dimensions) or merge (parallel merge sort).
  sort_method sort = sort_method::radix;
  // prune: box (bounding boxes of parts, and of leaves per query) or ego (SUPER-EGO's rule on
  // the cells of each part's first and last point only).
  prune_rule prune = prune_rule::box;
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

super_ego_params parse_params(const std::map<std::string, std::string>& params) {
  super_ego_params p;
  for (const auto& [key, value] : params) {
    if (key == "leaf") {
      p.leaf = parse_size(key, value, 1, std::size_t{1} << 16);
    } else if (key == "chunk") {
      p.chunk = parse_size(key, value, 1, std::size_t{1} << 31);
    } else if (key == "reorder") {
      if (value == "selectivity" || value == "on") {
        p.reorder = reorder_rule::selectivity;
      } else if (value == "variance") {
        p.reorder = reorder_rule::variance;
      } else {
        EPSJOIN_EXPECTS(value == "off", "super-ego: reorder must be selectivity, variance or "
                                        "off, got '", value, "'");
        p.reorder = reorder_rule::off;
      }
    } else if (key == "sort") {
      EPSJOIN_EXPECTS(value == "radix" || value == "merge",
                      "super-ego: sort must be radix or merge, got '", value, "'");
      p.sort = value == "radix" ? sort_method::radix : sort_method::merge;
    } else if (key == "prune") {
      EPSJOIN_EXPECTS(value == "box" || value == "ego",
                      "super-ego: prune must be box or ego, got '", value, "'");
      p.prune = value == "box" ? prune_rule::box : prune_rule::ego;
    }
  }
  return p;
}

// Hands every match to the sink as ordered pairs; both directions in a self-join.
template <class T>
class pair_output {
 public:
  pair_output(result_sink& sink, const sorted_points<T>& a, const sorted_points<T>& b, bool self)
      : emitter_(sink), a_ids_(a.ids.data()), b_ids_(b.ids.data()), self_(self) {}
  static constexpr bool counts = false;
  void begin_chunk(std::size_t, std::size_t) {}
  void end_chunk() {}
  void begin_leaf(std::size_t, std::size_t) {}
  void end_leaf() {}
  void row(std::size_t i, const std::uint32_t* js, std::size_t m) {
    const std::uint32_t qi = a_ids_[i];
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint32_t nj = b_ids_[js[k]];
      emitter_.emit(qi, nj);
      if (self_) emitter_.emit(nj, qi);
    }
  }
  void flush() { emitter_.flush(); }

 private:
  pair_emitter emitter_;
  const std::uint32_t* a_ids_;
  const std::uint32_t* b_ids_;
  bool self_;
};

// Counts-only sinks: per-query counts summed over a chunk (and, in a self-join, per-neighbour
// counts over a leaf), handed over as (id, count) entries instead of one entry per pair.
template <class T>
class count_output {
 public:
  count_output(result_sink& sink, const sorted_points<T>& a, const sorted_points<T>& b,
               bool self, std::size_t chunk, std::size_t leaf)
      : sink_(sink), a_ids_(a.ids.data()), b_ids_(b.ids.data()), self_(self),
        rows_(chunk, 0), cols_(leaf, 0) {}
  static constexpr bool counts = true;
  void begin_chunk(std::size_t a0, std::size_t a1) {
    a0_ = a0;
    std::fill(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(a1 - a0), 0u);
    a1_ = a1;
  }
  void end_chunk() {
    for (std::size_t i = a0_; i < a1_; ++i) add(a_ids_[i], rows_[i - a0_]);
  }
  void begin_leaf(std::size_t b0, std::size_t b1) {
    b0_ = b0;
    b1_ = b1;
  }
  void end_leaf() {
    for (std::size_t j = b0_; j < b1_; ++j) {
      if (self_) add(b_ids_[j], cols_[j - b0_]);
      cols_[j - b0_] = 0;
    }
  }
  std::uint32_t* columns() { return cols_.data(); }
  void add_row(std::size_t i, std::size_t m) { rows_[i - a0_] += static_cast<std::uint32_t>(m); }
  void flush() {
    if (ids_.empty()) return;
    sink_.consume_counts(ids_, counts_);
    ids_.clear();
    counts_.clear();
  }

 private:
  void add(std::uint32_t id, std::uint32_t count) {
    if (count == 0) return;
    ids_.push_back(id);
    counts_.push_back(count);
    if (ids_.size() >= (std::size_t{1} << 14)) flush();
  }
  result_sink& sink_;
  const std::uint32_t* a_ids_;
  const std::uint32_t* b_ids_;
  bool self_;
  std::vector<std::uint32_t> rows_, cols_;
  std::vector<std::uint32_t> ids_, counts_;
  std::size_t a0_ = 0, a1_ = 0, b0_ = 0, b1_ = 0;
};

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
  for (unsigned t = 0; t < threads; ++t) joiners.emplace_back(in, p.leaf, outs[t], counters[t]);
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
  }
  return total;
}

template <class T, int D>
join_counters join_dispatch_out(join_request& req, const join_inputs<T>& in,
                                const super_ego_params& p) {
  if (req.sink.counts_only()) {
    return join_all<T, D, count_output<T>>(req, in, p, [&] {
      return count_output<T>(req.sink, in.a, in.b, in.self_join,
                             std::min(std::max(p.chunk, p.leaf), in.a.n),
                             p.leaf);
    });
  }
  return join_all<T, D, pair_output<T>>(
      req, in, p, [&] { return pair_output<T>(req.sink, in.a, in.b, in.self_join); });
}

template <class T>
join_counters join_dispatch(join_request& req, const join_inputs<T>& in,
                            const super_ego_params& p) {
  switch (in.a.d) {
    case 1: return join_dispatch_out<T, 1>(req, in, p);
    case 2: return join_dispatch_out<T, 2>(req, in, p);
    case 3: return join_dispatch_out<T, 3>(req, in, p);
    case 4: return join_dispatch_out<T, 4>(req, in, p);
    case 5: return join_dispatch_out<T, 5>(req, in, p);
    case 6: return join_dispatch_out<T, 6>(req, in, p);
    case 7: return join_dispatch_out<T, 7>(req, in, p);
    case 8: return join_dispatch_out<T, 8>(req, in, p);
    default: return join_dispatch_out<T, 0>(req, in, p);
  }
}

template <class T>
void run_typed(join_request& req, const super_ego_params& p) {
  const unsigned threads = req.res.threads();
  stopwatch clock;
  const std::vector<std::size_t> order =
      dimension_order(req.queries, req.data, req.options.eps, p.reorder, threads);
  prepared<T> prep = prepare_points<T>(req.queries, req.data, req.self_join, order,
                                       req.options.eps, threads);
  req.stats.add_stage("prepare", clock.seconds());

  clock.restart();
  index_points(prep, p.sort, threads);
  const sorted_points<T>& a = prep.a;
  const sorted_points<T>& b = req.self_join ? prep.a : prep.b;
  const ego_tree<T> tree_a = build_tree(a, prep.geometry, p.leaf, threads);
  const ego_tree<T> tree_b = req.self_join ? ego_tree<T>{} : build_tree(b, prep.geometry, p.leaf,
                                                                        threads);
  req.stats.add_stage("index", clock.seconds());

  clock.restart();
  const double eps2 = req.options.eps * req.options.eps;
  const join_inputs<T> in{a,
                          tree_a,
                          b,
                          req.self_join ? tree_a : tree_b,
                          prep.geometry,
                          static_cast<T>(eps2),
                          eps2 * (1.0 + 0x1p-20),
                          p.prune,
                          req.self_join};
  const join_counters c = join_dispatch<T>(req, in, p);
  req.stats.add_stage("execute", clock.seconds());
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
}

class super_ego final : public engine {
 public:
  std::string_view name() const override { return "super-ego"; }
  std::string_view processor() const override { return "cpu"; }
  std::string_view description() const override {
    return "SUPER-EGO as NEW-SUPER-EGO: dimension reordering, parallel EGO sort, recursive "
           "EGO join with a shared work queue; multithreaded";
  }
  std::vector<std::string_view> param_keys() const override {
    // leaf=N (brute-force below N points a side), chunk=N (queries per work-queue chunk),
    // reorder=selectivity|variance|off, sort=radix|merge, prune=box|ego.
    return {"leaf", "chunk", "reorder", "sort", "prune"};
  }
  void run(join_request& req) const override {
    const super_ego_params p = parse_params(req.options.params);
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
