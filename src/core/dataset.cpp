#include "epsjoin/dataset.hpp"

#include "base/expects.hpp"

namespace epsjoin {

std::string_view to_string(scalar_type type) noexcept {
  return type == scalar_type::f64 ? "f64" : "f32";
}

dataset::dataset(std::size_t n, std::size_t d, scalar_type type) : n_(n), d_(d), type_(type) {
  if (type == scalar_type::f64) {
    f64_.assign(n * d, 0.0);
  } else {
    f32_.assign(n * d, 0.0f);
  }
}

dataset::dataset(std::vector<double> values, std::size_t d)
    : n_(d == 0 ? 0 : values.size() / d), d_(d), type_(scalar_type::f64), f64_(std::move(values)) {
  EPSJOIN_EXPECTS(d > 0 || f64_.empty(), "a dataset with values needs d >= 1");
  EPSJOIN_EXPECTS(d == 0 || f64_.size() % d == 0, f64_.size(),
                  " values do not split into points of dimension ", d);
}

dataset::dataset(std::vector<float> values, std::size_t d)
    : n_(d == 0 ? 0 : values.size() / d), d_(d), type_(scalar_type::f32), f32_(std::move(values)) {
  EPSJOIN_EXPECTS(d > 0 || f32_.empty(), "a dataset with values needs d >= 1");
  EPSJOIN_EXPECTS(d == 0 || f32_.size() % d == 0, f32_.size(),
                  " values do not split into points of dimension ", d);
}

dataset_view dataset::view() const noexcept {
  const void* p = type_ == scalar_type::f64 ? static_cast<const void*>(f64_.data())
                                            : static_cast<const void*>(f32_.data());
  return {p, n_, d_, type_};
}

dataset dataset::to_f64(dataset_view source) {
  std::vector<double> values(source.n * source.d);
  if (source.type == scalar_type::f64) {
    const auto* p = static_cast<const double*>(source.data);
    std::copy(p, p + values.size(), values.begin());
  } else {
    const auto* p = static_cast<const float*>(source.data);
    std::copy(p, p + values.size(), values.begin());
  }
  dataset out(std::move(values), source.d);
  out.n_ = source.n;
  return out;
}

dataset dataset::to_f32(dataset_view source) {
  std::vector<float> values(source.n * source.d);
  if (source.type == scalar_type::f32) {
    const auto* p = static_cast<const float*>(source.data);
    std::copy(p, p + values.size(), values.begin());
  } else {
    const auto* p = static_cast<const double*>(source.data);
    for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(p[k]);
  }
  dataset out(std::move(values), source.d);
  out.n_ = source.n;
  return out;
}

}  // namespace epsjoin
