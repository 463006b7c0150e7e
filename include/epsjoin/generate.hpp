#pragma once
/// @file generate.hpp
/// @brief Seeded, reproducible synthetic point sets.
///
/// Specs read `distribution:d:N[:key=value...]`, for example `expo:2:2000000`,
/// `uniform:4:1e6`, `gauss:8:100000:clusters=32:sigma=0.02:seed=7`.
/// @code
///   epsjoin::dataset pts = epsjoin::generate(epsjoin::parse_generator_spec("expo:2:100000"));
/// @endcode

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "epsjoin/dataset.hpp"

namespace epsjoin {

enum class distribution {
  uniform,            ///< uniform in [0, 1]^d
  exponential,        ///< each coordinate exponential(lambda), values outside [0, 1] redrawn
  gaussian_clusters,  ///< isotropic Gaussian blobs around uniform centres in [0, 1]^d
};

struct generator_spec {
  distribution dist = distribution::uniform;
  std::size_t d = 2;
  std::size_t n = 0;
  std::uint64_t seed = 2137834274;
  double lambda = 40.0;         ///< exponential only
  std::size_t clusters = 16;    ///< gaussian_clusters only
  /// gaussian_clusters only: per-coordinate standard deviation, in [0, 1e300] (larger ones could
  /// overflow to infinity)
  double sigma = 0.01;
  /// Exponential only: reproduce the papers' Expo* files exactly (std::mt19937 seeded with
  /// 2137834274, std::exponential_distribution<double>(40), point-major, redraw outside [0, 1],
  /// values rounded to 6 significant digits as their `%.6g` text files hold them).
  bool paper = false;
};

/// @brief Parses `distribution:d:N[:key=value...]`; names: uniform, expo (exponential),
///        gauss (gaussian_clusters); keys: seed, lambda, clusters, sigma, paper (0/1).
///        N accepts plain integers and forms like 2e6 or 2M. Throws invalid_argument.
generator_spec parse_generator_spec(std::string_view text);

/// @brief The spec in the canonical text form parse_generator_spec accepts.
std::string to_string(const generator_spec& spec);

/// @brief Generates the point set (float64). Same spec, same values, on every run and machine.
dataset generate(const generator_spec& spec);

/// @brief Rows [first, first + count) of generate(spec), exactly, without the others: each
///        point is drawn from its own index, so a process of several (an MPI rank) can make its
///        share alone. Not for `paper` specs, whose points are drawn in sequence
///        (invalid_argument), nor for rows beyond spec.n (invalid_argument).
dataset generate_rows(const generator_spec& spec, std::size_t first, std::size_t count);

}  // namespace epsjoin
