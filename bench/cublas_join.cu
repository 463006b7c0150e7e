// The cuBLAS baseline of issue 7: brute force the way a BLAS user writes it. Dot products of a
// tile of queries against a tile of candidates come from cublasDgemm, squared distances from
// |q|^2 + |p|^2 - 2 q.p, and a threshold kernel counts (and optionally emits) the pairs. The
// whole N x N square is computed, as a BLAS user would, although it is symmetric.
//
//   cublas_join peak [--size 8192] [--repeat 5] [--half]
//   cublas_join join (--data FILE.npy | --generate uniform:D:N) --eps E [--tile 8192]
//                    [--repeat 1] [--write-pairs [--pair-capacity 2^28]] [--gemm-pass]
//                    [--with-peak] [--check]
//
// Each mode prints one JSON line per result on stdout. It shares no code with epsjoin's engines.

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cub/block/block_reduce.cuh>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cublas_join_cuda.cuh"
#include "cublas_join_host.hpp"

namespace cublas_join {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string json_list(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    char text[32];
    std::snprintf(text, sizeof text, "%s%.6g", i ? "," : "", v[i]);
    out += text;
  }
  return out + "]";
}

unsigned grid_for(std::size_t n, unsigned block) {
  return static_cast<unsigned>((n + block - 1) / block);
}

// Values in [-0.5, 0.5): zeros would let the tensor cores run cooler and faster than real data.
__global__ void fill_kernel(double* out, std::size_t n, std::uint32_t salt) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  std::uint32_t h = static_cast<std::uint32_t>(k) * 2654435761u ^ salt;
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  out[k] = h * (1.0 / 4294967296.0) - 0.5;
}

__global__ void squared_norms_kernel(const double* points, std::size_t n, unsigned d,
                                     double* norms) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double* p = points + i * d;
  double s = 0;
  for (unsigned k = 0; k < d; ++k) s = fma(p[k], p[k], s);
  norms[i] = s;
}

struct pair_output {
  uint2* pairs = nullptr;  // [capacity] (query, candidate)
  unsigned long long capacity = 0;
  // Counts every pair found, also past capacity, so the host sees how many did not fit.
  unsigned long long* found = nullptr;
};

constexpr unsigned threshold_block = 256;

/// One block per query row of a tile of dot products [n_queries x n_candidates, row-major]
/// (cuBLAS's column-major candidates x queries).
template <bool WritePairs>
__global__ void __launch_bounds__(threshold_block)
    threshold_kernel(const double* dots, unsigned n_candidates, const double* norms,
                     unsigned first_query, unsigned first_candidate, double eps2,
                     unsigned long long* row_counts, pair_output out) {
  const unsigned query = first_query + blockIdx.x;
  const double query_norm = norms[query];
  const double* row = dots + static_cast<std::size_t>(blockIdx.x) * n_candidates;
  const double* candidate_norms = norms + first_candidate;
  const unsigned lane = threadIdx.x % 32;
  unsigned count = 0;
  // The bound is uniform over the block, so whole warps take part in every ballot.
  for (unsigned base = 0; base < n_candidates; base += threshold_block) {
    const unsigned col = base + threadIdx.x;
    bool within = false;
    if (col < n_candidates) {
      // Rounding can take the expanded form of a tiny distance below zero.
      const double s = fmax(query_norm + candidate_norms[col] - 2.0 * row[col], 0.0);
      within = s <= eps2;
    }
    count += within;
    if constexpr (WritePairs) {
      // One atomic per warp instead of one per pair.
      const unsigned hits = __ballot_sync(0xffffffffu, within);
      if (hits != 0) {
        const unsigned leader = __ffs(hits) - 1;
        unsigned long long first_slot = 0;
        if (lane == leader)
          first_slot = atomicAdd(out.found, static_cast<unsigned long long>(__popc(hits)));
        first_slot = __shfl_sync(0xffffffffu, first_slot, leader);
        if (within) {
          const unsigned long long slot = first_slot + __popc(hits & ((1u << lane) - 1u));
          if (slot < out.capacity) out.pairs[slot] = make_uint2(query, first_candidate + col);
        }
      }
    }
  }
  using block_reduce = cub::BlockReduce<unsigned, threshold_block>;
  __shared__ typename block_reduce::TempStorage scratch;
  const unsigned row_total = block_reduce(scratch).Sum(count);
  // Tiles of the same query row run on both streams, so rows are shared between launches.
  if (threadIdx.x == 0 && row_total != 0)
    atomicAdd(&row_counts[query], static_cast<unsigned long long>(row_total));
}

/// Calls `gemm` once to warm up, then `repeat` times, each timed with events on `s`; prints the
/// JSON line of mode `mode` (an M = N = K = size GEMM) with the median.
template <class Gemm>
void time_peak(const char* mode, std::size_t size, std::size_t repeat, cudaStream_t s,
               Gemm&& gemm) {
  gemm();  // the first call loads kernels and sets up cuBLAS's workspace
  CUDA_TRY(cudaStreamSynchronize(s));
  std::vector<double> seconds;
  event start, stop;
  for (std::size_t r = 0; r < repeat; ++r) {
    CUDA_TRY(cudaEventRecord(start.handle, s));
    gemm();
    CUDA_TRY(cudaEventRecord(stop.handle, s));
    CUDA_TRY(cudaEventSynchronize(stop.handle));
    seconds.push_back(elapsed_seconds(start, stop));
  }
  const double t = median(seconds);
  std::printf(
      "{\"mode\":\"%s\",\"size\":%zu,\"seconds\":%.9g,\"tflops\":%.6g,\"cublas\":\"%s\","
      "\"run_seconds\":%s}\n",
      mode, size, t, 2.0 * size * size * size / t / 1e12, cublas_version().c_str(),
      json_list(seconds).c_str());
  std::fflush(stdout);
}

__global__ void to_half_kernel(const double* in, std::size_t n, __half* out) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) out[k] = __double2half(in[k]);
}

/// Median seconds of an M = N = K = size FP16 GEMM with FP32 accumulation and output
/// (cublasGemmEx, CUBLAS_COMPUTE_32F): the FP16 tensor-core rate meta-16q is measured against.
void run_half_peak(std::size_t size, std::size_t repeat) {
  if (size == 0 || size > 46340 || repeat == 0)
    throw std::invalid_argument("peak: size in [1, 46340] and repeat >= 1");
  const std::size_t elements = size * size;
  device_buffer<double> staging(elements);
  device_buffer<__half> a(elements), b(elements);
  device_buffer<float> c(elements);
  stream s;
  blas h(s.handle);
  for (auto [to, salt] : {std::pair{a.data(), 1u}, std::pair{b.data(), 2u}}) {
    fill_kernel<<<grid_for(elements, 256), 256, 0, s.handle>>>(staging.data(), elements, salt);
    CUDA_TRY(cudaGetLastError());
    to_half_kernel<<<grid_for(elements, 256), 256, 0, s.handle>>>(staging.data(), elements, to);
    CUDA_TRY(cudaGetLastError());
  }
  const float one = 1.0f, zero = 0.0f;
  const int n = static_cast<int>(size);
  time_peak("hgemm-peak", size, repeat, s.handle, [&] {
    CUBLAS_TRY(cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data(), CUDA_R_16F,
                            n, b.data(), CUDA_R_16F, n, &zero, c.data(), CUDA_R_32F, n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
}

/// Median seconds of an M = N = K = size DGEMM: the device's FP64 (tensor-core) peak in practice.
void run_peak(std::size_t size, std::size_t repeat) {
  // size^2 must fit cuBLAS's int leading dimensions and element counts.
  if (size == 0 || size > 46340 || repeat == 0)
    throw std::invalid_argument("peak: size in [1, 46340] and repeat >= 1");
  const std::size_t elements = size * size;
  device_buffer<double> a(elements), b(elements), c(elements);
  stream s;
  blas h(s.handle);
  fill_kernel<<<grid_for(elements, 256), 256, 0, s.handle>>>(a.data(), elements, 1u);
  CUDA_TRY(cudaGetLastError());
  fill_kernel<<<grid_for(elements, 256), 256, 0, s.handle>>>(b.data(), elements, 2u);
  CUDA_TRY(cudaGetLastError());
  const double one = 1.0, zero = 0.0;
  const int n = static_cast<int>(size);
  time_peak("dgemm-peak", size, repeat, s.handle, [&] {
    CUBLAS_TRY(cublasDgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data(), n, b.data(),
                           n, &zero, c.data(), n));
  });
}

struct join_setup {
  const double* points;  // [n x d, row-major] = column-major d x n, leading dimension d
  std::size_t n;
  unsigned d;
  double eps;
  std::size_t tile;
  bool write_pairs;
};

/// The device state of one join, allocated once and reused by every repetition.
class tiled_join {
 public:
  tiled_join(const join_setup& setup, unsigned long long pair_capacity)
      : setup_(setup),
        norms_(setup.n),
        row_counts_(setup.n),
        found_(1),
        pairs_(setup.write_pairs ? pair_capacity : 0) {
    const std::size_t tile_extent = std::min(setup.tile, setup.n);
    const std::size_t tile_elements = tile_extent * tile_extent;
    for (int k = 0; k < 2; ++k) {
      streams_.emplace_back(std::make_unique<stream>());
      handles_.emplace_back(std::make_unique<blas>(streams_.back()->handle));
      dots_.emplace_back(std::make_unique<device_buffer<double>>(tile_elements));
    }
    // One untimed pass over a tile per stream, so lazy kernel loading and cuBLAS's workspace
    // set-up stay out of the runs; run() clears the counts it leaves behind. Fresh device memory
    // holds garbage, and a garbage pair counter would make this pass overflow at once.
    CUDA_TRY(cudaMemsetAsync(found_.data(), 0, sizeof(unsigned long long), main()));
    norms(main());
    CUDA_TRY(cudaStreamSynchronize(main()));
    for (int k = 0; k < 2; ++k) {
      gemm(k, 0, 0);
      threshold(k, 0, 0);
    }
    CUDA_TRY(cudaDeviceSynchronize());
  }

  /// Seconds of norms, GEMMs and threshold kernels over the whole square.
  double run() {
    CUDA_TRY(cudaMemsetAsync(row_counts_.data(), 0, setup_.n * sizeof(unsigned long long), main()));
    CUDA_TRY(cudaMemsetAsync(found_.data(), 0, sizeof(unsigned long long), main()));
    CUDA_TRY(cudaStreamSynchronize(main()));
    CUDA_TRY(cudaEventRecord(start_.handle, main()));
    norms(main());
    for_each_tile([&](int k, std::size_t q0, std::size_t c0) {
      gemm(k, q0, c0);
      threshold(k, q0, c0);
    });
    return stop_seconds();
  }

  /// Seconds of the same GEMMs without the threshold kernels: what cuBLAS alone costs.
  double run_gemms_only() {
    CUDA_TRY(cudaEventRecord(start_.handle, main()));
    for_each_tile([&](int k, std::size_t q0, std::size_t c0) { gemm(k, q0, c0); });
    return stop_seconds();
  }

  std::vector<std::uint64_t> row_counts() const {
    std::vector<std::uint64_t> counts(setup_.n);
    static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
    CUDA_TRY(cudaMemcpy(counts.data(), row_counts_.data(), setup_.n * 8, cudaMemcpyDeviceToHost));
    return counts;
  }

  unsigned long long pairs_found() const {
    unsigned long long found = 0;
    CUDA_TRY(cudaMemcpy(&found, found_.data(), sizeof found, cudaMemcpyDeviceToHost));
    return found;
  }

 private:
  cudaStream_t main() const { return streams_[0]->handle; }

  std::size_t extent(std::size_t first) const { return std::min(setup_.tile, setup_.n - first); }

  /// Tile pairs alternate between the two streams and their dot buffers; a buffer is reused only
  /// by the next tile pair of its own stream, which the stream orders after its threshold kernel.
  template <class F>
  void for_each_tile(F&& work) {
    CUDA_TRY(cudaEventRecord(ready_.handle, main()));
    CUDA_TRY(cudaStreamWaitEvent(streams_[1]->handle, ready_.handle, 0));
    std::size_t step = 0;
    for (std::size_t q0 = 0; q0 < setup_.n; q0 += setup_.tile) {
      for (std::size_t c0 = 0; c0 < setup_.n; c0 += setup_.tile)
        work(static_cast<int>(step++ % 2), q0, c0);
    }
    CUDA_TRY(cudaEventRecord(side_done_.handle, streams_[1]->handle));
    CUDA_TRY(cudaStreamWaitEvent(main(), side_done_.handle, 0));
  }

  double stop_seconds() {
    CUDA_TRY(cudaEventRecord(stop_.handle, main()));
    CUDA_TRY(cudaEventSynchronize(stop_.handle));
    return elapsed_seconds(start_, stop_);
  }

  void norms(cudaStream_t s) {
    squared_norms_kernel<<<grid_for(setup_.n, 256), 256, 0, s>>>(setup_.points, setup_.n, setup_.d,
                                                                 norms_.data());
    CUDA_TRY(cudaGetLastError());
  }

  void gemm(int k, std::size_t q0, std::size_t c0) {
    const int queries = static_cast<int>(extent(q0));
    const int candidates = static_cast<int>(extent(c0));
    const int d = static_cast<int>(setup_.d);
    const double one = 1.0, zero = 0.0;
    // Column-major C [candidates x queries] = P_c^T Q_q: each query's dot products lie contiguous.
    CUBLAS_TRY(cublasDgemm(handles_[k]->handle, CUBLAS_OP_T, CUBLAS_OP_N, candidates, queries, d,
                           &one, setup_.points + c0 * setup_.d, d, setup_.points + q0 * setup_.d, d,
                           &zero, dots_[k]->data(), candidates));
  }

  void threshold(int k, std::size_t q0, std::size_t c0) {
    const auto queries = static_cast<unsigned>(extent(q0));
    const auto candidates = static_cast<unsigned>(extent(c0));
    const pair_output out{pairs_.data(), setup_.write_pairs ? pairs_.size() : 0, found_.data()};
    const double eps2 = setup_.eps * setup_.eps;
    cudaStream_t s = streams_[k]->handle;
    if (setup_.write_pairs) {
      threshold_kernel<true><<<queries, threshold_block, 0, s>>>(
          dots_[k]->data(), candidates, norms_.data(), static_cast<unsigned>(q0),
          static_cast<unsigned>(c0), eps2, row_counts_.data(), out);
    } else {
      threshold_kernel<false><<<queries, threshold_block, 0, s>>>(
          dots_[k]->data(), candidates, norms_.data(), static_cast<unsigned>(q0),
          static_cast<unsigned>(c0), eps2, row_counts_.data(), out);
    }
    CUDA_TRY(cudaGetLastError());
  }

  join_setup setup_;
  device_buffer<double> norms_;
  device_buffer<unsigned long long> row_counts_;
  device_buffer<unsigned long long> found_;
  device_buffer<uint2> pairs_;
  std::vector<std::unique_ptr<stream>> streams_;
  std::vector<std::unique_ptr<blas>> handles_;
  std::vector<std::unique_ptr<device_buffer<double>>> dots_;
  event start_, stop_, ready_, side_done_;
};

void run_join(const arguments& args) {
  if (args.has("data") == args.has("generate"))
    throw std::invalid_argument("give one of --data FILE.npy and --generate uniform:D:N");
  if (!args.has("eps")) throw std::invalid_argument("missing --eps E");
  const double eps = args.get_double("eps", 0);
  if (!(eps > 0 && eps < 1e300)) throw std::invalid_argument("--eps must be finite and > 0");
  const std::size_t tile = args.get_size("tile", 8192);
  const std::size_t repeat = args.get_size("repeat", 1);
  const unsigned long long pair_capacity = args.get_size("pair-capacity", 1ull << 28);
  if (tile == 0 || tile > (1u << 20)) throw std::invalid_argument("--tile must be in [1, 2^20]");
  if (repeat == 0) throw std::invalid_argument("--repeat must be at least 1");

  const points host =
      args.has("data") ? load_npy(args.get("data")) : generate(args.get("generate"));
  if (host.n == 0 || host.d == 0) throw std::invalid_argument(host.description + ": no points");
  // Pairs are written as uint32 ids; cuBLAS takes int extents.
  if (host.n >= (1ull << 31)) throw std::invalid_argument("more than 2^31 - 1 points");

  CUDA_TRY(cudaFree(nullptr));  // the context, outside every timing
  cudaDeviceProp prop{};
  int device = 0;
  CUDA_TRY(cudaGetDevice(&device));
  CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  if (args.has("with-peak")) run_peak(args.get_size("peak-size", 8192), 5);

  device_buffer<double> device_points(host.values.size());
  const auto upload_start = std::chrono::steady_clock::now();
  CUDA_TRY(cudaMemcpy(device_points.data(), host.values.data(), host.values.size() * sizeof(double),
                      cudaMemcpyHostToDevice));
  const double upload_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - upload_start).count();

  const join_setup setup{device_points.data(),   host.n, static_cast<unsigned>(host.d), eps, tile,
                         args.has("write-pairs")};
  tiled_join join(setup, pair_capacity);
  std::vector<double> seconds;
  for (std::size_t r = 0; r < repeat; ++r) seconds.push_back(join.run());
  const std::vector<std::uint64_t> counts = join.row_counts();
  std::uint64_t total = 0;
  for (std::uint64_t c : counts) total += c;
  const double gemm_seconds = args.has("gemm-pass") ? join.run_gemms_only() : 0.0;

  const double t = median(seconds);
  const double flops =
      2.0 * static_cast<double>(host.n) * static_cast<double>(host.n) * static_cast<double>(host.d);
  std::string extra;
  char text[256];
  if (args.has("gemm-pass")) {
    std::snprintf(text, sizeof text, ",\"gemm_seconds\":%.9g,\"gemm_tflops\":%.6g", gemm_seconds,
                  flops / gemm_seconds / 1e12);
    extra += text;
  }
  if (setup.write_pairs) {
    // Of the last run; every run finds the same pairs.
    const unsigned long long found = join.pairs_found();
    std::snprintf(
        text, sizeof text,
        ",\"pairs_found\":%llu,\"pair_capacity\":%llu,\"pairs_written\":%llu,\"overflow\":%s",
        found, pair_capacity, std::min(found, pair_capacity),
        found > pair_capacity ? "true" : "false");
    extra += text;
    if (found > pair_capacity) {
      std::fprintf(
          stderr,
          "cublas_join: pair buffer overflow: %llu pairs found, %llu fit (--pair-capacity)\n",
          found, pair_capacity);
    }
  }
  if (args.has("check")) {
    const std::vector<std::uint64_t> expected = cpu_counts(host, eps);
    std::uint64_t mismatched_rows = 0, expected_total = 0;
    for (std::size_t i = 0; i < host.n; ++i) {
      mismatched_rows += counts[i] != expected[i];
      expected_total += expected[i];
    }
    std::snprintf(text, sizeof text, ",\"check_pairs\":%llu,\"check_mismatched_rows\":%llu",
                  static_cast<unsigned long long>(expected_total),
                  static_cast<unsigned long long>(mismatched_rows));
    extra += text;
    if (mismatched_rows != 0) {
      std::fprintf(
          stderr,
          "cublas_join: %llu rows differ from the CPU count (pairs at eps may round either way)\n",
          static_cast<unsigned long long>(mismatched_rows));
    }
  }
  std::printf(
      "{\"mode\":\"join\",\"engine\":\"cublas\",\"device\":\"%s\",\"input\":\"%s\",\"n\":%zu,\"d\":"
      "%zu,"
      "\"eps\":%.17g,\"tile\":%zu,\"pairs\":%llu,\"seconds\":%.9g,\"tflops\":%.6g,\"upload_"
      "seconds\":%.6g,"
      "\"cublas\":\"%s\",\"run_seconds\":%s%s}\n",
      prop.name, host.description.c_str(), host.n, host.d, eps, tile,
      static_cast<unsigned long long>(total), t, flops / t / 1e12, upload_seconds,
      cublas_version().c_str(), json_list(seconds).c_str(), extra.c_str());
}

int usage() {
  std::fputs(
      "usage: cublas_join peak [--size 8192] [--repeat 5] [--half]\n"
      "       cublas_join join (--data FILE.npy | --generate uniform:D:N) --eps E [--tile 8192]\n"
      "                        [--repeat 1] [--write-pairs] [--pair-capacity 268435456] "
      "[--gemm-pass]\n"
      "                        [--with-peak [--peak-size 8192]] [--check]\n"
      "join counts ordered pairs with squared distance <= eps^2, self pairs included.\n",
      stderr);
  return 2;
}

}  // namespace

}  // namespace cublas_join

int main(int argc, char** argv) {
  using namespace cublas_join;
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  try {
    if (mode == "peak") {
      const arguments args(argc, argv, 2, {"half"});
      args.reject_unknown({"size", "repeat", "half"});
      if (args.has("half")) {
        run_half_peak(args.get_size("size", 8192), args.get_size("repeat", 5));
      } else {
        run_peak(args.get_size("size", 8192), args.get_size("repeat", 5));
      }
    } else if (mode == "join") {
      const arguments args(argc, argv, 2, {"write-pairs", "gemm-pass", "with-peak", "check"});
      args.reject_unknown({"data", "generate", "eps", "tile", "repeat", "pair-capacity",
                           "write-pairs", "gemm-pass", "with-peak", "peak-size", "check"});
      run_join(args);
    } else {
      return usage();
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "cublas_join: %s\n", e.what());
    return usage();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cublas_join: %s\n", e.what());
    return 1;
  }
  return 0;
}
