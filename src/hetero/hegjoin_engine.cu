// hegjoin: one join shared by the GPU and the CPU (dissertation ch. 4). lbjoin's pipeline builds
// the device grid and the work items once; the items, heaviest first, go through a work deque
// from which the GPU takes batches at the heavy end and CPU workers chunks at the light end
// (hetero/cpu_share.hpp). The CPU joins its items against a host copy of the same index, so
// neither side repeats the other's preprocessing. Parameters:
//   partition     dynamic | static-queries | static-candidates (sec. 4.4.2)
//   gpu_fraction  static: the GPU's share, skipping the model
//   ref_eps, ref_gpu_seconds, ref_cpu_seconds   static: the model's reference times (eq. 4.1-4.4);
//                 without them (and without gpu_fraction) a calibration measures them at eps / 2
//   calibration_cache  file the calibrations are kept in (hetero/calibration_cache.hpp), or off
//   cpu_threads   CPU workers (default: the resource's threads less the one driving the GPU)
//   cpu_chunk     queries per CPU chunk, n_p^CPU (default 1024)
//   gpu_batches   fewest batches the GPU's work is cut into (default 8; at least 2 x streams)
//   batch_items   fewest items (warps) in a GPU batch (default 32768, four waves on an H100)
//   pattern       lid-unicomp (default with the grid side; self-joins: each pair computed once,
//                 by the side that takes its owner's item, which writes both rows) | full
//   cpu_engine    grid (default: the CPU joins against a host copy of the GPU's index) |
//                 super-ego (an EGO index of its own, sec. 4.4.5; full rows, so pattern full)
//   ego_leaf, ego_query_leaf   super-ego side: the index's and a chunk's brute-force part sizes
//   cpu_yield     dynamic: on (default) | off; a CPU worker leaves the rest to the GPU once it
//                 expects to finish its next chunk after the GPU would finish everything left
// and lbjoin's stage_dims, sort, fill, index_dims, segment_ids, chunk_ids. The kernel is the tiled
// one, whose arithmetic the CPU side repeats bit for bit; the work queue is off (batches on two
// streams cannot share one queue counter).

#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "core/builtin_engines.hpp"
#include "gpu/lbjoin/lbjoin_kernels.cuh"
#include "hetero/calibration_cache.hpp"
#include "hetero/deque_source.cuh"
#include "hetero/partition.hpp"

namespace epsjoin::detail {

namespace {

using namespace lbjoin;
using namespace row_join;
using hetero::partition_strategy;

/// Calibrations already made in this process, by data (its address and shape: a new array at a
/// freed one's address would reuse a calibration, which costs balance, never correctness), eps
/// and configuration.
using calibration_key = std::tuple<const void*, std::size_t, const void*, std::size_t, int, double,
                                   scalar_type, std::string>;
std::mutex calibration_mutex;
std::map<calibration_key, hetero::reference_times> calibrations;

template <class T>
class hegjoin_runner {
 public:
  hegjoin_runner(join_request& req, row_join_settings rows, kernel_choice kernel)
      : req_(req), rows_(std::move(rows)), kernels_(kernel) {}

  void run(const hetero::share_settings& share) {
    const std::size_t notes_before = req_.stats.notes.size();
    {
      hetero::cpu_share<T> cpu(share);
      hetero::deque_source<T> source(cpu);
      if (run_row_join<T>(req_, rows_, kernels_, &source) == row_join_result::done) return;
    }
    // The GPU's half of the rows did not fit one device segment (a result of billions of ids):
    // the first attempt's notes describe a join that was never delivered; keep only why.
    const auto why = req_.stats.notes.back();
    req_.stats.notes.resize(notes_before);
    req_.stats.notes.push_back(why);
    rows_.lid_unicomp = false;
    const std::string halving = "pattern lid-unicomp";
    if (const auto at = rows_.summary.find(halving); at != std::string::npos) {
      rows_.summary.replace(at, halving.size(), "pattern full (re-run with full)");
    }
    hetero::cpu_share<T> cpu(share);
    hetero::deque_source<T> source(cpu);
    run_row_join<T>(req_, rows_, kernels_, &source);
  }

  /// GPU-only and CPU-only counting times at `eps` (the counting phase each side measured).
  hetero::reference_times calibrate(double eps, const hetero::share_settings& base) {
    hetero::reference_times t;
    t.eps = eps;
    for (double fraction : {1.0, 0.0}) {
      join_options options = req_.options;
      options.eps = eps;
      options.progress = {};
      count_sink counts;
      join_stats stats;
      counts.begin({req_.queries.n, req_.data.n, req_.self_join, false});
      join_request sub{req_.res,  req_.queries, req_.data, req_.self_join,
                       options,   counts,       stats,     req_.budget};
      hetero::share_settings s = base;
      s.strategy = partition_strategy::static_candidates;
      s.gpu_fraction = fraction;
      hetero::cpu_share<T> cpu(s);
      hetero::deque_source<T> source(cpu);
      run_row_join<T>(sub, rows_, kernels_, &source);
      (fraction == 1.0 ? t.gpu_seconds : t.cpu_seconds) =
          std::max(fraction == 1.0 ? cpu.gpu().seconds : cpu.cpu().seconds, 1e-6);
    }
    return t;
  }

 private:
  join_request& req_;
  row_join_settings rows_;
  lbjoin_kernels<T> kernels_;
};

class hegjoin_engine final : public engine {
 public:
  std::string_view name() const override { return "hegjoin"; }
  std::string_view processor() const override { return "cpu+gpu"; }
  std::string_view description() const override {
    return "GPU and CPU together (dissertation ch. 4): lbjoin on the GPU, a grid join (or "
           "super-ego) on the cores, one work deque in workload order";
  }
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  std::vector<std::string_view> param_keys() const override {
    std::vector<std::string_view> keys = {"sort",        "fill",      "index_dims",
                                          "segment_ids", "chunk_ids", "pattern"};
    keys.insert(keys.end(), {"stage_dims", "partition", "gpu_fraction", "ref_eps",
                             "ref_gpu_seconds", "ref_cpu_seconds", "calibration_cache",
                             "cpu_threads", "cpu_chunk", "gpu_batches", "batch_items",
                             "cpu_engine", "ego_leaf", "ego_query_leaf", "cpu_yield"});
    return keys;
  }

  void run(join_request& req) const override {
    with_precision(req.options.precision, [&]<class T>() { run_typed<T>(req); });
  }

 private:
  template <class T>
  void run_typed(join_request& req) const {
    const param_map& params = req.options.params;
    row_join_settings rows = read_row_join_settings(params, false);
    rows.queue = false;
    hetero::share_settings share;
    const bool ego =
        param_choice(params, "cpu_engine", {"grid", "super-ego"}, "grid") == "super-ego";
    if (ego) {
      EPSJOIN_EXPECTS(!params.contains("pattern") || params.at("pattern") == "full",
                      "hegjoin: cpu_engine=super-ego computes full rows; it needs pattern=full, "
                      "not ", params.at("pattern"));
      rows.lid_unicomp = false;
      share.cpu_engine = hetero::cpu_engine_kind::super_ego;
      share.ego.leaf = param_uint(params, "ego_leaf", 0, 0, 1u << 16);
      share.ego.query_leaf = param_uint(params, "ego_query_leaf", 8, 1, 1u << 16);
    } else {
      for (const char* key : {"ego_leaf", "ego_query_leaf"}) {
        EPSJOIN_EXPECTS(!params.contains(key), "hegjoin: parameter ", key,
                        " applies to cpu_engine=super-ego only");
      }
    }
    // The tiled kernel only: the CPU side mirrors its arithmetic (hetero/cpu_rows.cpp and core/within_eps.hpp).
    const kernel_choice kernel = read_kernel_choice(params);
    rows.summary =
        concat(kernel.summary, ", sort ", rows.sort ? "on" : "off", ", queue off, pattern ",
               rows.lid_unicomp && req.self_join ? "lid-unicomp" : "full",
               ", CPU side ", ego ? "super-ego" : "grid");

    const std::string partition = param_choice(
        params, "partition", {"dynamic", "static-queries", "static-candidates"}, "dynamic");
    share.strategy = partition == "dynamic"          ? partition_strategy::dynamic
                     : partition == "static-queries" ? partition_strategy::static_queries
                                                     : partition_strategy::static_candidates;
    // One core drives the GPU (its launches, copies and the deque's front); the rest join.
    const unsigned threads = req.res.threads();
    share.cpu_threads = static_cast<unsigned>(
        param_uint(params, "cpu_threads", threads > 1 ? threads - 1 : 1, 0, 4096));
    share.cpu_chunk_queries =
        static_cast<std::uint32_t>(param_uint(params, "cpu_chunk", 1024, 1, 1u << 30));
    share.gpu_batches = static_cast<unsigned>(param_uint(params, "gpu_batches", 8, 1, 1u << 20));
    share.min_batch_items =
        static_cast<std::uint32_t>(param_uint(params, "batch_items", 1u << 15, 1, 1u << 31));
    const bool dynamic = share.strategy == partition_strategy::dynamic;
    for (const char* key : {"gpu_fraction", "ref_eps", "ref_gpu_seconds", "ref_cpu_seconds"}) {
      EPSJOIN_EXPECTS(!dynamic || !params.contains(key), "parameter ", key,
                      " applies to the static partitions only (partition=", partition, ")");
    }
    EPSJOIN_EXPECTS(dynamic || !params.contains("cpu_yield"),
                    "parameter cpu_yield applies to partition=dynamic only (a static partition's "
                    "CPU part is the CPU's to finish)");
    share.cpu_yields = param_choice(params, "cpu_yield", {"on", "off"}, "on") == "on";
    hegjoin_runner<T> runner(req, rows, kernel);
    if (dynamic) {
      share.summary = "dynamic";
    } else if (params.contains("gpu_fraction")) {
      share.gpu_fraction = param_real(params, "gpu_fraction", 1, 0, 1);
      share.summary = concat(partition, ", GPU fraction ", share.gpu_fraction, " (given)");
    } else {
      const hetero::reference_times ref = reference(req, runner, share, params);
      const hetero::partition_model m =
          predict_partition(static_cast<int>(req.data.d), req.options.eps, ref);
      share.gpu_fraction = m.gpu_fraction;
      share.summary =
          concat(partition, ", GPU fraction ", m.gpu_fraction, " from ref_eps=", ref.eps,
                 " ref_gpu_seconds=", ref.gpu_seconds, " ref_cpu_seconds=", ref.cpu_seconds,
                 " (predicted GPU ", m.gpu_seconds, " s, CPU ", m.cpu_seconds, " s, both ",
                 m.hybrid_seconds, " s)");
    }
    runner.run(share);
  }

  /// The model's reference times: given, or measured at eps / 2 (kept for this process and in the
  /// calibration file).
  template <class T>
  static hetero::reference_times reference(join_request& req, hegjoin_runner<T>& runner,
                                           const hetero::share_settings& share,
                                           const param_map& params) {
    const bool given = params.contains("ref_gpu_seconds") || params.contains("ref_cpu_seconds") ||
                       params.contains("ref_eps");
    if (given) {
      hetero::reference_times t;
      t.eps = param_real(params, "ref_eps", req.options.eps, 1e-300, 1e300);
      t.gpu_seconds = param_real(params, "ref_gpu_seconds", 0, 1e-9, 1e9);
      t.cpu_seconds = param_real(params, "ref_cpu_seconds", 0, 1e-9, 1e9);
      EPSJOIN_EXPECTS(params.contains("ref_gpu_seconds") && params.contains("ref_cpu_seconds"),
                      "the static model needs both ref_gpu_seconds and ref_cpu_seconds");
      return t;
    }
    const double eps = req.options.eps / 2;
    std::string configuration;
    for (const auto& [k, v] : params) {
      if (k != "calibration_cache") configuration += concat(k, "=", v, ";");
    }
    configuration += concat("threads=", share.cpu_threads);
    const std::string file =
        params.contains("calibration_cache")
            ? (params.at("calibration_cache") == "off" ? std::string()
                                                       : params.at("calibration_cache"))
            : hetero::default_calibration_path();
    const calibration_key key{req.queries.data,
                              req.queries.n,
                              req.data.data,
                              req.data.n,
                              static_cast<int>(req.data.d),
                              eps,
                              req.options.precision,
                              configuration};
    {
      std::lock_guard lock(calibration_mutex);
      if (auto it = calibrations.find(key); it != calibrations.end()) return it->second;
    }
    const std::string disk_key =
        file.empty() ? std::string()
                     : hetero::calibration_key(req.queries, req.data, req.self_join, eps,
                                               req.options.precision, configuration, machine(req));
    if (!file.empty()) {
      if (const auto stored = hetero::find_calibration(file, disk_key)) {
        req.stats.notes.push_back({"calibration", concat("read from ", file)});
        std::lock_guard lock(calibration_mutex);
        calibrations[key] = *stored;
        return *stored;
      }
    }
    stopwatch clock;
    const hetero::reference_times t = runner.calibrate(eps, share);
    req.stats.add_stage("calibration", clock.seconds());
    if (file.empty()) {
      req.stats.notes.push_back({"calibration", "measured (calibration_cache=off)"});
    } else if (const std::string failed = hetero::store_calibration(file, disk_key, t);
               failed.empty()) {
      req.stats.notes.push_back({"calibration", concat("measured, kept in ", file)});
    } else {
      req.stats.notes.push_back({"calibration", concat("measured, not kept: ", failed)});
    }
    std::lock_guard lock(calibration_mutex);
    calibrations[key] = t;
    return t;
  }

  /// The machine a calibration was measured on: the host's name and the GPU's.
  static std::string machine(join_request& req) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown-host");
    return concat(host, "/", acquire_gpu(req.res).properties.name);
  }
};

}  // namespace

std::unique_ptr<engine> make_hegjoin_engine() { return std::make_unique<hegjoin_engine>(); }

}  // namespace epsjoin::detail
