#include "support/paper_data.hpp"

#include <ostream>

#include "epsjoin/generate.hpp"
#include "support/test_names.hpp"

namespace epsjoin::test {

dataset paper_expo(std::size_t d, std::size_t n) {
  generator_spec spec;
  spec.dist = distribution::exponential;
  spec.d = d;
  spec.n = n;
  spec.paper = true;
  return generate(spec);
}

const std::vector<reference_case>& reference_cases() {
  static const std::vector<reference_case> cases = {
      {2, 2000000, 0.000141, 101490662}, {2, 2000000, 0.000448, 995740666},
      {4, 2000000, 0.00244, 100260410},  {4, 2000000, 0.00447, 994327794},
      {8, 2000000, 0.0127, 101726610},   {8, 2000000, 0.0178, 985417186},
      {16, 1000000, 0.0396, 50219282},   {16, 1000000, 0.049, 498411232},
  };
  return cases;
}

std::string reference_case_name(const testing::TestParamInfo<reference_case>& info) {
  return "Expo" + std::to_string(info.param.d) + "D_" + std::to_string(info.param.n) + "_eps" +
         name_number(info.param.eps);
}

void PrintTo(const reference_case& c, std::ostream* out) {
  *out << "Expo" << c.d << "D " << c.n << " points, eps " << c.eps << ", |R| "
       << c.with_self;
}

}  // namespace epsjoin::test
