#pragma once
// Factories of the engines compiled into the library; registry.cpp lists them in one place.

#include <memory>
#include <string>

#include "core/engine.hpp"

namespace epsjoin::detail {

std::unique_ptr<engine> make_brute_cpu_engine();
std::unique_ptr<engine> make_cpu_grid_engine();
std::unique_ptr<engine> make_cpu_rtree_engine();
std::unique_ptr<engine> make_super_ego_engine();
std::unique_ptr<engine> make_gpu_sj_engine();    // CUDA builds only
std::unique_ptr<engine> make_brute_gpu_engine(); // CUDA builds only
std::unique_ptr<engine> make_lbjoin_engine();    // CUDA builds only
std::unique_ptr<engine> make_gds_join_engine();  // CUDA builds only
std::unique_ptr<engine> make_ted_join_engine();  // CUDA builds only
std::unique_ptr<engine> make_hegjoin_engine();   // CUDA builds only
std::unique_ptr<engine> make_meta_16q_engine();  // CUDA builds only
std::unique_ptr<engine> make_meta_1q_engine();   // CUDA builds only
std::unique_ptr<engine> make_cuda_tensor_engine();  // experiments/cuda_tensor only

/// An engine this build lacks: listed, but every run throws `unavailable` with `reason`.
std::unique_ptr<engine> make_unavailable_engine(std::string name, std::string processor,
                                                std::string description, std::string reason);

}  // namespace epsjoin::detail
