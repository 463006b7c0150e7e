#pragma once
// What every call into the library shares: numpy points as a dataset view, the settings as
// resources and options, and the library's work run with the GIL released and Ctrl-C heard.

#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <epsjoin/epsjoin.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "join_calls.hpp"

namespace epsjoin_python {

epsjoin::dataset_view view_of(const points_array& a);
/// float64 or float32, else invalid_argument (host and device arrays alike).
epsjoin::scalar_type scalar_type_of(nb::dlpack::dtype dtype);

epsjoin::scalar_type precision_of(const std::string& name);

/// Resources from a pool kept between calls (a GPU engine's context, streams and buffers are
/// paid once), set to the call's threads and memory; lent to one call at a time.
std::unique_ptr<epsjoin::resources> take_resources(const run_settings& s);
void give_back(std::unique_ptr<epsjoin::resources> res);

/// Thrown from the progress callback when Python has a pending signal (Ctrl-C): the library
/// stops and rethrows it; the Python error set by PyErr_CheckSignals is raised then.
struct interrupted {};

/// A progress callback that checks for Ctrl-C (about ten times a second) and hands the fraction
/// done to `report` (a Python callable, borrowed: it outlives the call) when there is one; an
/// exception `report` raises stops the library as Ctrl-C does.
std::function<void(double)> interrupt_check(PyObject* report = nullptr);

/// The settings' progress callable, or nullptr for None.
inline PyObject* report_of(const run_settings& s) {
  return s.progress.is_none() ? nullptr : s.progress.ptr();
}

/// `body(resources)` with the GIL released; Ctrl-C during it raises KeyboardInterrupt.
template <class Body>
auto run_released(const run_settings& s, Body&& body) {
  std::unique_ptr<epsjoin::resources> res = take_resources(s);
  try {
    nb::gil_scoped_release release;
    auto result = body(*res);
    give_back(std::move(res));
    return result;
  } catch (const interrupted&) {
    give_back(std::move(res));
    throw nb::python_error();
  }
}

/// A join's options from the call's settings (the geometry included), with Ctrl-C heard through
/// the progress callback.
epsjoin::join_options options_of(const run_settings& s, double eps, bool include_self);

/// A join: `body(resources, options)` with the options of `s`, run as run_released runs it.
template <class Body>
epsjoin::join_stats run_join_released(double eps, bool include_self, const run_settings& s,
                                      Body&& body) {
  const epsjoin::join_options options = options_of(s, eps, include_self);
  return run_released(s, [&](epsjoin::resources& r) { return body(r, options); });
}

/// Refuses two point sets of different dtypes (a self-join passes its one set twice).
void check_same_dtype(const epsjoin::dataset_view& a, const epsjoin::dataset_view& b);

/// (total ordered pairs, per-query counts [n_queries] uint64 or None, stats dict): what a count
/// join returns, whether its points lay on the host or a device.
/// With `with_stats` false the dict is None: a one-point query spends more on it than on the
/// search.
nb::tuple counts_result(const epsjoin::count_sink& sink, bool per_row, std::size_t n_queries,
                        const epsjoin::join_stats& stats, bool with_stats = true);

/// (indptr [n_queries + 1] uint64, indices [nnz] uint32, stats dict): what a CSR join returns;
/// the arrays own the sink's table (no copy), which goes when the last of them does.
nb::tuple table_result(epsjoin::csr_sink& sink, std::size_t n_queries,
                       const epsjoin::join_stats& stats, bool with_stats = true);

/// (indptr, indices, distances [nnz] float64, stats dict): the same for a sink made
/// `with_distances`; the three arrays own the table together.
nb::tuple distance_table_result(epsjoin::csr_sink& sink, std::size_t n_queries,
                                const epsjoin::join_stats& stats);

}  // namespace epsjoin_python
