// Compiles error.hpp alone: it must include everything it uses.
#include "epsjoin/error.hpp"
