// Compiles build_info.hpp alone: it must include everything it uses.
#include "epsjoin/build_info.hpp"
