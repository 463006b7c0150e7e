// Compiles options.hpp alone: it must include everything it uses.
#include "epsjoin/options.hpp"
