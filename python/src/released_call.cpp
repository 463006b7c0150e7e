#include "released_call.hpp"

#include <mutex>
#include <vector>

namespace epsjoin_python {

namespace {

class resources_pool {
 public:
  std::unique_ptr<epsjoin::resources> take(int device) {
    std::lock_guard lock(mutex_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if ((*it)->device() == device) {
        std::unique_ptr<epsjoin::resources> r = std::move(*it);
        idle_.erase(it);
        return r;
      }
    }
    return std::make_unique<epsjoin::resources>(0, device);
  }
  void give_back(std::unique_ptr<epsjoin::resources> r) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < 4) idle_.push_back(std::move(r));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<epsjoin::resources>> idle_;
};

resources_pool& pool() {
  // Never destroyed: a GPU context torn down after the interpreter is gone helps nobody.
  static resources_pool* p = new resources_pool;
  return *p;
}

}  // namespace

epsjoin::dataset_view view_of(const points_array& a) {
  epsjoin::dataset_view v;
  v.data = a.data();
  v.n = a.shape(0);
  v.d = a.shape(1);
  if (a.dtype() == nb::dtype<double>()) {
    v.type = epsjoin::scalar_type::f64;
  } else if (a.dtype() == nb::dtype<float>()) {
    v.type = epsjoin::scalar_type::f32;
  } else {
    throw epsjoin::invalid_argument(
        "points must be float32 or float64 (the Python layer converts others)");
  }
  return v;
}

epsjoin::scalar_type precision_of(const std::string& name) {
  if (name == "f64") return epsjoin::scalar_type::f64;
  if (name == "f32") return epsjoin::scalar_type::f32;
  throw epsjoin::invalid_argument("precision must be 'f64' or 'f32', got '" + name + "'");
}

std::unique_ptr<epsjoin::resources> take_resources(const run_settings& s) {
  std::unique_ptr<epsjoin::resources> res = pool().take(s.device);
  res->set_threads(s.threads);
  res->set_memory({s.host_memory_bytes, s.device_memory_bytes});
  return res;
}

void give_back(std::unique_ptr<epsjoin::resources> res) { pool().give_back(std::move(res)); }

std::function<void(double)> interrupt_check() {
  return [](double) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw interrupted{};
  };
}

}  // namespace epsjoin_python
