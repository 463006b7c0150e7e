#include "core/auto_select.hpp"

#include <string>
#include <string_view>

#include "base/expects.hpp"

namespace epsjoin::detail {

namespace {

const engine* available(std::string_view name) {
  const engine* e = find_engine(name);
  return (e != nullptr && e->unavailable_reason().empty()) ? e : nullptr;
}

// Below this many distance-pair opportunities (queries x points, on a log scale) the GPU's
// start-up (context, index upload) costs more than the whole join on the CPU. On the H100
// machine, Expo2D with 200k points took 17 ms with cpu-grid (16 threads) and 117 ms with gpu-sj,
// almost all of it CUDA start-up; at 2M points gpu-sj wins (bench/RESULTS.md).
constexpr std::size_t gpu_min_points = 1'000'000;

// Where ted-join's FP64 tensor cores beat lbjoin's CUDA cores (bench/RESULTS.md, issue 7, Expo
// data, 1M points, median of 3 in one run): from 16 dimensions on (16-D: 1.26 s against 1.38 s at
// S 49, 1.67 s against 1.99 s at S 497; 24-D: 2.16 s against 2.33 s at S 51; its GEMM kernel takes
// the joins whose index leaves most pairs: 32-D 2.3 s against lbjoin's 8.3 s, 64-D 3.5 s against
// 36.8 s, lbjoin's from an earlier run). At 2-8-D lbjoin is as fast or faster; 9-15 dimensions are
// unmeasured and stay with it.
constexpr std::size_t ted_min_dims = 16;

bool ted_join_is_faster(std::size_t d) { return d >= ted_min_dims; }

// And where meta-16q's FP16 tensor cores (exact: the error band re-checked in FP64) beat both
// (bench/RESULTS.md, issue 8, run 7, one join each, CSR with self pairs): Expo16D 1M 0.51 s
// against ted-join's 1.35 s and lbjoin's 1.42 s at S 49, 0.73 s against 1.77 s and 2.09 s at
// S 497; Expo32D 1M 0.67 s and 1.11 s against ted-join's 2.08 s and 2.22 s. At 8-D lbjoin is as
// fast or faster (Expo8D 2M: 0.36 s against 0.48 s at S 50, 0.72 s against 0.72 s at S 492).
constexpr std::size_t meta_min_dims = 16;

// From this many dimensions on `auto` takes super-ego on the CPU, below it cpu-grid (measured:
// see choose_engine).
constexpr std::size_t ego_min_dims = 6;

/// The GPU engine for points in d dimensions (chosen = nullptr when none is available); `why`
/// says why a GPU engine was wanted.
engine_choice gpu_engine_for(std::size_t d, const std::string& why) {
  if (d >= meta_min_dims) {
    if (const engine* e = available("meta-16q")) {
      return {e, concat("meta-16q: a CUDA device with FP16 tensor cores is present, ", why,
                        " and d = ", d, " >= ", meta_min_dims)};
    }
  }
  if (ted_join_is_faster(d)) {
    if (const engine* e = available("ted-join")) {
      return {e, concat("ted-join: a CUDA device with FP64 tensor cores is present, ", why,
                        " and d = ", d, " >= ", ted_min_dims)};
    }
  }
  // lbjoin's defaults are its fastest configuration measured (bench/RESULTS.md, issue 5).
  if (const engine* e = available("lbjoin")) {
    return {e, concat("lbjoin: a CUDA device is present and ", why)};
  }
  return {nullptr, {}};
}

engine_choice choose_gpu_engine(std::size_t d, const std::string& why) {
  engine_choice choice = gpu_engine_for(d, why);
  if (choice.chosen == nullptr) {
    throw unavailable(concat("no GPU engine is available for --engine auto, and ", why));
  }
  return choice;
}

}  // namespace

engine_choice choose_engine(const join_request& request) {
  const std::size_t n = std::max(request.queries.n, request.data.n);
  const std::size_t d = request.data.n > 0 ? request.data.d : request.queries.d;
  // Points already in device memory stay there: a GPU engine whatever N is.
  const bool device_points = request.data.on_device() || request.queries.on_device();
  if (device_points) return choose_gpu_engine(d, "the points are in device memory");
  if (n >= gpu_min_points) {
    engine_choice gpu = gpu_engine_for(d, concat("N = ", n, " >= ", gpu_min_points));
    if (gpu.chosen != nullptr) return gpu;
  }
  const std::string why_cpu =
      n >= gpu_min_points ? std::string("no usable CUDA device")
                          : concat("N = ", n, " is below the GPU threshold ", gpu_min_points);
  // On the CPU, SUPER-EGO refines fewer candidates than the grid as d grows. Measured
  // (bench/RESULTS.md, "Which CPU engine", 2 threads, S 50, count and CSR): the grid is faster up
  // to 5-D (super-ego 1.2-1.9x its time on uniform 3-5-D, 0.93-1.5x on Expo 3-4-D), they tie at
  // 6-D (0.53-1.08x), and super-ego wins from 8-D on (0.13-0.81x, uniform and Expo 8-16-D).
  if (d >= ego_min_dims) {
    if (const engine* e = available("super-ego")) {
      return {e, concat("super-ego: ", why_cpu, "; d = ", d, " >= ", ego_min_dims)};
    }
  }
  if (const engine* e = available("cpu-grid")) {
    return {e, concat("cpu-grid: ", why_cpu,
                      d >= ego_min_dims ? std::string() : concat("; d < ", ego_min_dims))};
  }
  if (const engine* e = available("brute-cpu")) return {e, "brute-cpu: the only engine built in"};
  throw unavailable("no engine is available for --engine auto");
}

}  // namespace epsjoin::detail
