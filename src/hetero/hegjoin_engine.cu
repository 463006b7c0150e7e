// hegjoin: one join shared by the GPU and the CPU (dissertation ch. 4). lbjoin's pipeline builds
// the device grid and the work items once; the items, heaviest first, go through a work deque
// from which the GPU takes batches at the heavy end and CPU workers chunks at the light end
// (hetero/split_join.hpp). The CPU joins its items against a host copy of the same index, so
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
#include <optional>
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
  hegjoin_runner(join_request& req, row_join_params rows, kernel_choice kernel)
      : req_(req), rows_(std::move(rows)), kernels_(kernel) {}

  void run(const hetero::share_settings& share) {
    const std::size_t notes_before = req_.stats.notes.size();
    {
      hetero::split_join<T> cpu(share);
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
    hetero::split_join<T> cpu(share);
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
                       options,   counts,       stats,     req_.budget,
                       req_.params};
      hetero::share_settings s = base;
      s.strategy = partition_strategy::static_candidates;
      s.gpu_fraction = fraction;
      hetero::split_join<T> cpu(s);
      hetero::deque_source<T> source(cpu);
      run_row_join<T>(sub, rows_, kernels_, &source);
      (fraction == 1.0 ? t.gpu_seconds : t.cpu_seconds) =
          std::max(fraction == 1.0 ? cpu.gpu().seconds : cpu.cpu().seconds, 1e-6);
    }
    return t;
  }

 private:
  join_request& req_;
  row_join_params rows_;
  lbjoin_kernels<T> kernels_;
};

/// hegjoin's parameters. What depends on the machine or the join (the CPU threads' default,
/// ref_eps's default, the calibration) is settled in run(); the rest here.
struct hegjoin_params final : engine_params {
  row_join_params rows;
  kernel_choice kernel;
  hetero::share_settings share;  ///< all but cpu_threads' default, gpu_fraction and summary
  std::optional<unsigned> cpu_threads;  ///< absent: the resource's threads less one
  std::string partition = "dynamic";
  std::optional<double> gpu_fraction;  ///< static partitions: given, skipping the model
  /// Static partitions: the model's reference times, when any is given (ref_eps defaults to
  /// the join's eps).
  bool ref_given = false;
  std::optional<double> ref_eps;
  double ref_gpu_seconds = 0, ref_cpu_seconds = 0;
  std::optional<std::string> calibration_cache;  ///< absent: the default file
  /// Every parameter but calibration_cache, as key=value; part of a calibration's key.
  std::string configuration;
};

// In the order the engine read them before the parse was typed, so the same input meets the
// same error first. Keys that apply in some configurations only are declared up front (text)
// and read where they apply.
std::unique_ptr<const engine_params> read_hegjoin_params(param_reader& r) {
  using kind = param_kind;
  auto p = std::make_unique<hegjoin_params>();
  for (const auto& [k, v] : r.values()) {
    if (k != "calibration_cache") p->configuration += concat(k, "=", v, ";");
  }
  // No queue switch: batches on two streams cannot share one queue counter.
  p->rows = read_row_join_params(r, false, false);
  p->rows.queue = false;
  hetero::share_settings& share = p->share;
  const bool ego = r.choice("cpu_engine", kind::tuning,
                            "grid (a host copy of the GPU's index) | super-ego (an EGO index of "
                            "its own; full rows)",
                            {"grid", "super-ego"}, "grid") == "super-ego";
  r.text("ego_leaf", kind::tuning, "super-ego side: the index's brute-force part size");
  r.text("ego_query_leaf", kind::tuning, "super-ego side: a chunk's brute-force part size");
  if (ego) {
    const std::string* pattern = r.text("pattern", kind::ablation, "");
    EPSJOIN_EXPECTS(pattern == nullptr || *pattern == "full",
                    "hegjoin: cpu_engine=super-ego computes full rows; it needs pattern=full, "
                    "not ", pattern == nullptr ? std::string() : *pattern);
    p->rows.lid_unicomp = false;
    share.cpu_engine = hetero::cpu_engine_kind::super_ego;
    share.ego.leaf = r.uint("ego_leaf", kind::tuning, "", 0, 0, 1u << 16);
    share.ego.query_leaf = r.uint("ego_query_leaf", kind::tuning, "", 8, 1, 1u << 16);
  } else {
    for (const char* key : {"ego_leaf", "ego_query_leaf"}) {
      EPSJOIN_EXPECTS(!r.has(key), "hegjoin: parameter ", key,
                      " applies to cpu_engine=super-ego only");
    }
  }
  // The tiled kernel only: the CPU side mirrors its arithmetic (hetero/cpu_rows.cpp and base/within_eps.hpp).
  p->kernel = read_kernel_choice(r, true);
  p->partition = r.choice("partition", kind::tuning,
                          "dynamic | static-queries | static-candidates: how the work is shared "
                          "(sec. 4.4.2)",
                          {"dynamic", "static-queries", "static-candidates"}, "dynamic");
  share.strategy = p->partition == "dynamic"          ? partition_strategy::dynamic
                   : p->partition == "static-queries" ? partition_strategy::static_queries
                                                      : partition_strategy::static_candidates;
  r.text("cpu_threads", kind::tuning, "CPU workers (default: the threads less the GPU's driver)");
  if (r.has("cpu_threads")) {
    p->cpu_threads = static_cast<unsigned>(r.uint("cpu_threads", kind::tuning, "", 0, 0, 4096));
  }
  share.cpu_chunk_queries = static_cast<std::uint32_t>(
      r.uint("cpu_chunk", kind::tuning, "queries per CPU chunk (default 1024)", 1024, 1, 1u << 30));
  share.gpu_batches = static_cast<unsigned>(
      r.uint("gpu_batches", kind::tuning, "fewest batches the GPU's work is cut into (default 8)",
             8, 1, 1u << 20));
  share.min_batch_items = static_cast<std::uint32_t>(
      r.uint("batch_items", kind::tuning, "fewest items (warps) in a GPU batch (default 32768)",
             1u << 15, 1, 1u << 31));
  r.text("gpu_fraction", kind::tuning, "static partitions: the GPU's share, skipping the model");
  r.text("ref_eps", kind::tuning, "static partitions: the model's reference eps");
  r.text("ref_gpu_seconds", kind::tuning, "static partitions: the GPU's time at ref_eps");
  r.text("ref_cpu_seconds", kind::tuning, "static partitions: the CPU's time at ref_eps");
  r.text("calibration_cache", kind::tuning,
         "file the model's calibrations are kept in, or off");
  const bool dynamic = share.strategy == partition_strategy::dynamic;
  for (const char* key : {"gpu_fraction", "ref_eps", "ref_gpu_seconds", "ref_cpu_seconds"}) {
    EPSJOIN_EXPECTS(!dynamic || !r.has(key), "parameter ", key,
                    " applies to the static partitions only (partition=", p->partition, ")");
  }
  EPSJOIN_EXPECTS(dynamic || !r.has("cpu_yield"),
                  "parameter cpu_yield applies to partition=dynamic only (a static partition's "
                  "CPU part is the CPU's to finish)");
  share.cpu_yields = r.on_off("cpu_yield", kind::ablation,
                              "dynamic: a CPU worker leaves the rest to the GPU once it would "
                              "finish after it",
                              true);
  if (dynamic) return p;
  if (r.has("gpu_fraction")) {
    p->gpu_fraction = r.real("gpu_fraction", kind::tuning, "", 1, 0, 1);
    return p;
  }
  p->ref_given = r.has("ref_gpu_seconds") || r.has("ref_cpu_seconds") || r.has("ref_eps");
  if (p->ref_given) {
    if (r.has("ref_eps")) p->ref_eps = r.real("ref_eps", kind::tuning, "", 0, 1e-300, 1e300);
    p->ref_gpu_seconds = r.real("ref_gpu_seconds", kind::tuning, "", 0, 1e-9, 1e9);
    p->ref_cpu_seconds = r.real("ref_cpu_seconds", kind::tuning, "", 0, 1e-9, 1e9);
    EPSJOIN_EXPECTS(r.has("ref_gpu_seconds") && r.has("ref_cpu_seconds"),
                    "the static model needs both ref_gpu_seconds and ref_cpu_seconds");
  }
  if (const std::string* file = r.text("calibration_cache", kind::tuning, "")) {
    p->calibration_cache = *file;
  }
  return p;
}

class hegjoin_engine final : public engine {
 public:
  std::string_view name() const override { return "hegjoin"; }
  std::string_view processor() const override { return "cpu+gpu"; }
  std::string_view description() const override {
    return "GPU and CPU together (dissertation ch. 4): lbjoin on the GPU, a grid join (or "
           "super-ego) on the cores, one work deque in workload order";
  }
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    return read_hegjoin_params(reader);
  }

  void run(join_request& req) const override {
    with_precision(req.options.precision, [&]<class T>() { run_typed<T>(req); });
  }

 private:
  template <class T>
  void run_typed(join_request& req) const {
    const hegjoin_params& p = req.params_as<hegjoin_params>();
    row_join_params rows = p.rows;
    hetero::share_settings share = p.share;
    const bool ego = share.cpu_engine == hetero::cpu_engine_kind::super_ego;
    rows.summary =
        concat(p.kernel.summary, ", sort ", rows.sort ? "on" : "off", ", queue off, pattern ",
               rows.lid_unicomp && req.self_join ? "lid-unicomp" : "full",
               ", CPU side ", ego ? "super-ego" : "grid");
    // One core drives the GPU (its launches, copies and the deque's front); the rest join.
    const unsigned threads = req.res.threads();
    share.cpu_threads = p.cpu_threads.value_or(threads > 1 ? threads - 1 : 1);
    hegjoin_runner<T> runner(req, rows, p.kernel);
    if (share.strategy == partition_strategy::dynamic) {
      share.summary = "dynamic";
    } else if (p.gpu_fraction) {
      share.gpu_fraction = *p.gpu_fraction;
      share.summary = concat(p.partition, ", GPU fraction ", share.gpu_fraction, " (given)");
    } else {
      const hetero::reference_times ref = reference(req, runner, share, p);
      const hetero::partition_model m =
          predict_partition(static_cast<int>(req.data.d), req.options.eps, ref);
      share.gpu_fraction = m.gpu_fraction;
      share.summary =
          concat(p.partition, ", GPU fraction ", m.gpu_fraction, " from ref_eps=", ref.eps,
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
                                           const hegjoin_params& p) {
    if (p.ref_given) {
      hetero::reference_times t;
      t.eps = p.ref_eps.value_or(req.options.eps);
      t.gpu_seconds = p.ref_gpu_seconds;
      t.cpu_seconds = p.ref_cpu_seconds;
      return t;
    }
    const double eps = req.options.eps / 2;
    const std::string configuration = concat(p.configuration, "threads=", share.cpu_threads);
    const std::string file =
        p.calibration_cache ? (*p.calibration_cache == "off" ? std::string() : *p.calibration_cache)
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
