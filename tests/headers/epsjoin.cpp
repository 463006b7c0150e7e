// Compiles epsjoin.hpp alone: it must include everything it uses.
#include "epsjoin/epsjoin.hpp"
