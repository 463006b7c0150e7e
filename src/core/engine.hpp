#pragma once
// The internal engine interface: dispatch validates a request and hands it to one engine.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/memory_budget.hpp"
#include "core/engine_params.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin::detail {

class device_link_consumer;

/// One device's share of a counts-only join that several devices run whole, each with its own
/// copy of the index (core/multi_device_join.hpp): the device counts work items index,
/// index + count, index + 2 count, ... of the join's workload order, the others the rest.
/// Every device builds the same items from the same points, so the shares are disjoint and
/// together every item once. The engine fills in what the caller checks afterwards.
struct work_share {
  unsigned index = 0;
  unsigned count = 1;
  bool honoured = false;        ///< set by the engine that counted only its share
  std::uint64_t items = 0;      ///< the items of the whole join, as this device built them
  std::uint64_t candidates = 0; ///< the whole join's candidates, as this device found them
};

/// One validated join. Ids in emitted pairs refer to the caller's point order.
struct join_request {
  resources& res;
  dataset_view queries;  // the data itself for a self-join
  dataset_view data;
  bool self_join;
  const join_options& options;
  /// Engines emit ordered pairs here. A self-join engine emits both (i, j) and (j, i) and never
  /// (i, i): dispatch adds self pairs when asked. Counts-only sinks may take consume_counts.
  result_sink& sink;
  /// Engines add candidates, stages and notes; dispatch fills the rest.
  join_stats& stats;
  /// What every planner of the join asks before it sizes a buffer, segment or batch.
  memory_budget budget;
  /// The engine's parameters, parsed by dispatch from options.params before any work
  /// (engine::parse_params); engines read these, never the strings.
  const engine_params* params = nullptr;
  /// When set (only for an engine whose takes_device_links() is true, self-joins): the pairs are
  /// linked here, on the device, and nothing reaches `sink` (core/device_links.hpp).
  device_link_consumer* device_links = nullptr;
  /// When set (only for an engine whose shares_work_items() is true, counts-only sinks): the
  /// engine counts only this share of the work items, and says so in it.
  work_share* item_share = nullptr;
  /// When set (a device of a multi-device self-join whose rows go into the caller's table in
  /// place): the caller's id of each point. An engine that writes its rows' neighbour ids on
  /// the device may write these instead of the points' own indices, and then sets
  /// `caller_ids_written`; otherwise the device maps its rows' ids afterwards, on the host.
  std::span<const std::uint32_t> caller_ids = {};
  bool caller_ids_written = false;

  /// The parameters as the engine's own struct; a mismatch is a bug in dispatch, not the input.
  template <class P>
  const P& params_as() const {
    const P* typed = dynamic_cast<const P*>(params);
    if (typed == nullptr) throw error("internal: the request carries another engine's parameters");
    return *typed;
  }
};

class engine {
 public:
  virtual ~engine() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view processor() const = 0;  // "cpu", "gpu", "tensor", "cpu+gpu"
  virtual std::string_view description() const = 0;
  /// Relative band around eps inside which results may differ from the exact oracle.
  virtual double error_band() const { return 1e-12; }
  /// True when the engine computes metric `m` itself (options.metric); every engine computes
  /// euclidean. Dispatch runs cosine and haversine on the others through unit vectors.
  virtual bool computes(distance_metric m) const { return m == distance_metric::euclidean; }
  /// True when the engine takes a periodic box (options.box).
  virtual bool takes_periodic_box() const { return false; }
  /// Empty when the engine can run on this machine; otherwise why not.
  virtual std::string unavailable_reason() const { return {}; }
  /// True when the engine can link its pairs into a device_link_consumer's union-find
  /// (join_request::device_links) instead of handing them to the sink: the row_join engines.
  virtual bool takes_device_links() const { return false; }
  /// True when the engine counts only a share of its work items when asked
  /// (join_request::item_share): the row_join engines.
  virtual bool shares_work_items() const { return false; }
  /// True when the engine reads points in CUDA device memory where they lie (memory_space::
  /// device on resources::device()): the GPU and tensor-core engines, whose processor says so.
  virtual bool reads_device_points() const {
    return processor() == "gpu" || processor() == "tensor";
  }
  /// Declares and reads the engine's parameters (core/engine_params.hpp): every key with its
  /// kind and description, through `reader`, whatever the map holds (over an empty map it
  /// must give the defaults, as that is how the keys are listed). The default declares none,
  /// for engines that take no parameters.
  virtual std::unique_ptr<const engine_params> read_params(param_reader& reader) const;
  /// The typed parameters from the strings: rejects a key the engine does not declare first
  /// (unknown_param_message), then bad values, with errors that name the key. Dispatch calls
  /// it once per join, before any work.
  std::unique_ptr<const engine_params> parse_params(const param_map& values) const;
  /// Every key the engine takes, with its kind and description, in declaration order.
  std::vector<param_spec> param_specs() const;
  virtual void run(join_request& request) const = 0;
};

/// Calls `f.template operator()<float>()` or `<double>()` as `precision` says: an engine's run()
/// as `with_precision(req.options.precision, [&]<class T>() { run_typed<T>(req); })`.
template <class F>
decltype(auto) with_precision(scalar_type precision, F&& f) {
  if (precision == scalar_type::f32) return f.template operator()<float>();
  return f.template operator()<double>();
}

/// True when `e` can run a join in metric `m`: it computes m, or m is cosine or haversine and it
/// computes euclidean (dispatch then joins unit vectors, core/metric_join.hpp).
bool supports_metric(const engine& e, distance_metric m);

/// Every engine, in registration order (built on first use).
const std::vector<std::unique_ptr<engine>>& registered_engines();
/// The engine called `name`, or nullptr.
const engine* find_engine(std::string_view name);

}  // namespace epsjoin::detail
