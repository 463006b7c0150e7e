// Joins a generated set through the installed headers and library; prints the version and the
// pair count for tests/install/check_install.cmake to compare.
#include <cstdio>
#include <epsjoin/epsjoin.hpp>

int main() {
  epsjoin::resources res;
  const epsjoin::dataset points =
      epsjoin::generate(epsjoin::parse_generator_spec("uniform:2:2000"));
  epsjoin::join_options options;
  options.eps = 0.05;
  epsjoin::count_sink count;
  epsjoin::self_join(res, points.view(), options, count);
  std::printf("epsjoin %s pairs %llu\n", epsjoin::build().version.c_str(),
              static_cast<unsigned long long>(count.total()));
  return count.total() > 0 ? 0 : 1;
}
