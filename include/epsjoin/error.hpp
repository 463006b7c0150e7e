#pragma once
/// @file error.hpp
/// @brief Exceptions thrown at the public boundary of epsjoin.

#include <stdexcept>
#include <string>

namespace epsjoin {

/// @brief Base of every exception epsjoin throws; the message says what to fix.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief A caller-supplied value is out of range (eps <= 0, unknown engine, bad spec, ...).
class invalid_argument : public error {
 public:
  using error::error;
};

/// @brief Input could not be read: missing file, malformed content (names file, line, column).
class io_error : public error {
 public:
  using error::error;
};

/// @brief A CUDA runtime call failed; the message names the call, file and line.
class cuda_error : public error {
 public:
  using error::error;
};

/// @brief The work cannot fit in host or device memory, detected before it started.
class out_of_memory : public error {
 public:
  using error::error;
};

/// @brief The engine is not built in, no device is present, or the device is too old.
class unavailable : public error {
 public:
  using error::error;
};

}  // namespace epsjoin
