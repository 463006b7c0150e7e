// Compiles generate.hpp alone: it must include everything it uses.
#include "epsjoin/generate.hpp"
