#pragma once
// Points copied to CUDA device 0 for a GPU test, freed with it.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>

#include "epsjoin/dataset.hpp"

namespace epsjoin::test {

struct device_points {
  void* data = nullptr;
  epsjoin::dataset_view view;  ///< the host points' view, pointing at the device copy
  explicit device_points(const epsjoin::dataset& host) {
    view = host.view();
    const std::size_t bytes = host.n() * host.d() * size_of(host.type());
    EXPECT_EQ(cudaMalloc(&data, std::max<std::size_t>(bytes, 1)), cudaSuccess);
    if (bytes > 0) {
      EXPECT_EQ(cudaMemcpy(data, view.data, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    }
    view.data = data;
    view.space = epsjoin::memory_space::device;
    view.device = 0;
  }
  ~device_points() { cudaFree(data); }
  device_points(const device_points&) = delete;
  device_points& operator=(const device_points&) = delete;
};

}  // namespace epsjoin::test
