// Issue 29's question about peer copies: when every device of a multi-GPU join needs the same
// points (the work-items split), is one upload followed by device-to-device copies faster than
// every device uploading from the host? Times, for G = 2.. the visible devices and a few sizes:
//   host (pinned) -> each    every device copies the whole buffer from pinned host memory
//   host (pageable) -> each  the same from ordinary memory (the driver stages it)
//   one upload + peers       device 0 uploads from pinned memory, then copies to the others
//   split + all-gather       each device uploads 1/G, then fetches the other slices from peers
// Each figure is the best of --repeat runs, from the first copy issued to the last one done.
//
// usage: peer_copy [--mib 1024,3072] [--repeat 3]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "peer_copy: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

struct device_side {
  int ordinal = 0;
  char* buffer = nullptr;
  cudaStream_t stream = nullptr;
};

void wait_all(const std::vector<device_side>& devices, int g) {
  for (int k = 0; k < g; ++k) {
    check(cudaSetDevice(devices[k].ordinal), "cudaSetDevice");
    check(cudaStreamSynchronize(devices[k].stream), "cudaStreamSynchronize");
  }
}

double best_seconds(int repeat, const std::function<void()>& copy) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    copy();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

std::vector<std::size_t> sizes_from(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    sizes.push_back(std::stoull(text.substr(at, end - at)) << 20);
    at = end + 1;
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mib = "1024,3072";
  int repeat = 3;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (std::strcmp(argv[a], "--mib") == 0) mib = argv[a + 1];
    if (std::strcmp(argv[a], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[a + 1]));
  }
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count < 2) {
    std::printf("peer_copy: %d device(s) visible; peer copies need two\n", count);
    return 0;
  }
  const std::vector<std::size_t> sizes = sizes_from(mib);
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());

  std::vector<device_side> devices(count);
  for (int k = 0; k < count; ++k) {
    devices[k].ordinal = k;
    check(cudaSetDevice(k), "cudaSetDevice");
    check(cudaMalloc(&devices[k].buffer, largest), "cudaMalloc");
    check(cudaStreamCreateWithFlags(&devices[k].stream, cudaStreamNonBlocking), "stream");
    for (int j = 0; j < count; ++j) {
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, k, j), "cudaDeviceCanAccessPeer");
      if (j != k && can) check(cudaDeviceEnablePeerAccess(j, 0), "cudaDeviceEnablePeerAccess");
      if (k == 0 && j == 1) std::printf("peer access 0 -> 1: %s\n", can ? "yes" : "no");
    }
  }
  char* pinned = nullptr;
  check(cudaHostAlloc(&pinned, largest, cudaHostAllocPortable), "cudaHostAlloc");
  std::vector<char> pageable(largest);
  std::memset(pinned, 1, largest);
  std::memset(pageable.data(), 1, largest);

  std::printf("| MiB | devices | host (pinned) -> each | host (pageable) -> each | one upload + peers | "
              "split + all-gather |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (std::size_t bytes : sizes) {
    for (int g = 2; g <= count; g *= 2) {
      auto from_host = [&](const char* host) {
        return [&, host] {
          for (int k = 0; k < g; ++k) {
            check(cudaSetDevice(k), "cudaSetDevice");
            check(cudaMemcpyAsync(devices[k].buffer, host, bytes, cudaMemcpyHostToDevice,
                                  devices[k].stream),
                  "upload");
          }
          wait_all(devices, g);
        };
      };
      const double pinned_each = best_seconds(repeat, from_host(pinned));
      const double pageable_each = best_seconds(repeat, from_host(pageable.data()));
      const double one_then_peers = best_seconds(repeat, [&] {
        check(cudaSetDevice(0), "cudaSetDevice");
        check(cudaMemcpyAsync(devices[0].buffer, pinned, bytes, cudaMemcpyHostToDevice,
                              devices[0].stream),
              "upload");
        check(cudaStreamSynchronize(devices[0].stream), "sync");
        for (int k = 1; k < g; ++k) {
          check(cudaSetDevice(k), "cudaSetDevice");
          check(cudaMemcpyPeerAsync(devices[k].buffer, k, devices[0].buffer, 0, bytes,
                                    devices[k].stream),
                "peer copy");
        }
        wait_all(devices, g);
      });
      const double all_gather = best_seconds(repeat, [&] {
        const std::size_t slice = (bytes + g - 1) / g;
        auto part = [&](int s) { return std::min(slice, bytes - std::min(bytes, s * slice)); };
        for (int k = 0; k < g; ++k) {
          check(cudaSetDevice(k), "cudaSetDevice");
          check(cudaMemcpyAsync(devices[k].buffer + k * slice, pinned + k * slice, part(k),
                                cudaMemcpyHostToDevice, devices[k].stream),
                "upload");
        }
        wait_all(devices, g);
        for (int k = 0; k < g; ++k) {
          check(cudaSetDevice(k), "cudaSetDevice");
          for (int s = 0; s < g; ++s) {
            if (s == k || part(s) == 0) continue;
            check(cudaMemcpyPeerAsync(devices[k].buffer + s * slice, k, devices[s].buffer + s * slice,
                                      s, part(s), devices[k].stream),
                  "peer copy");
          }
        }
        wait_all(devices, g);
      });
      std::printf("| %zu | %d | %.4f s | %.4f s | %.4f s | %.4f s |\n", bytes >> 20, g, pinned_each,
                  pageable_each, one_then_peers, all_gather);
    }
  }
  for (device_side& d : devices) {
    check(cudaSetDevice(d.ordinal), "cudaSetDevice");
    check(cudaFree(d.buffer), "cudaFree");
    check(cudaStreamDestroy(d.stream), "cudaStreamDestroy");
  }
  check(cudaFreeHost(pinned), "cudaFreeHost");
  return 0;
}
