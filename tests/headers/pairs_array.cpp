// Compiles pairs_array.hpp alone: it must include everything it uses.
#include "epsjoin/pairs_array.hpp"
