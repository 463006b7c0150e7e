// Compiles stats.hpp alone: it must include everything it uses.
#include "epsjoin/stats.hpp"
