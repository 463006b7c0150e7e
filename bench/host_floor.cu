// The physical floor of delivering a result of B bytes from the GPU into fresh host memory, measured
// on this machine in the same run as the joins it judges: the pinned device-to-host copy, the
// first touch of fresh memory on every core (2 MiB-aligned and advised for transparent huge pages,
// as the library's tables are), and the copy from touched to touched memory on every core. A
// result cannot reach the user's table faster than its bytes over the slowest of the three.
//
// usage: host_floor BYTES [THREADS] -> one JSON object on stdout (rates in GB/s, 1e9 bytes)

#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "host_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr std::size_t huge_page = std::size_t{2} << 20;

char* fresh(std::size_t bytes) {
  const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
  void* p = std::aligned_alloc(huge_page, rounded);
  if (p == nullptr) {
    std::fprintf(stderr, "host_floor: cannot allocate %zu bytes\n", bytes);
    std::exit(1);
  }
  (void)madvise(p, rounded, MADV_HUGEPAGE);
  return static_cast<char*>(p);
}

template <class F>
void on_threads(unsigned threads, std::size_t bytes, F&& f) {
  std::vector<std::thread> pool;
  const std::size_t step = (bytes / threads + 4095) / 4096 * 4096;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t lo = std::min(bytes, t * step), hi = std::min(bytes, lo + step);
    pool.emplace_back([&f, lo, hi] { f(lo, hi); });
  }
  for (auto& t : pool) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: host_floor BYTES [THREADS]\n");
    return 2;
  }
  // Rates are steady well below a large table's size; 4 GiB bounds the probe's own cost.
  const std::size_t wanted = std::strtoull(argv[1], nullptr, 10);
  const std::size_t bytes = std::clamp<std::size_t>(wanted, std::size_t{256} << 20, std::size_t{4} << 30);
  const unsigned threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2]))
                                    : std::max(1u, std::thread::hardware_concurrency());

  void* device = nullptr;
  void* pinned = nullptr;
  check(cudaMalloc(&device, bytes), "cudaMalloc");
  check(cudaMemset(device, 1, bytes), "cudaMemset");
  check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
  check(cudaMemcpy(pinned, device, bytes, cudaMemcpyDeviceToHost), "warm-up copy");
  double t = now();
  check(cudaMemcpy(pinned, device, bytes, cudaMemcpyDeviceToHost), "device-to-host copy");
  const double d2h = bytes / (now() - t) / 1e9;

  char* a = fresh(bytes);
  t = now();
  on_threads(threads, bytes, [&](std::size_t lo, std::size_t hi) { std::memset(a + lo, 7, hi - lo); });
  const double touch = bytes / (now() - t) / 1e9;

  char* b = fresh(bytes);
  on_threads(threads, bytes, [&](std::size_t lo, std::size_t hi) { std::memset(b + lo, 0, hi - lo); });
  t = now();
  on_threads(threads, bytes,
             [&](std::size_t lo, std::size_t hi) { std::memcpy(b + lo, a + lo, hi - lo); });
  const double copy = bytes / (now() - t) / 1e9;

  const double slowest = std::min({d2h, touch, copy});
  std::printf("{\"probe_bytes\":%zu,\"threads\":%u,\"d2h_pinned_gbs\":%.2f,\"first_touch_gbs\":%.2f,"
              "\"host_copy_gbs\":%.2f,\"floor_gbs\":%.2f,\"floor_seconds_for_bytes\":%.4f}\n",
              bytes, threads, d2h, touch, copy, slowest, wanted / (slowest * 1e9));
  std::free(a);
  std::free(b);
  check(cudaFreeHost(pinned), "cudaFreeHost");
  check(cudaFree(device), "cudaFree");
  return 0;
}
