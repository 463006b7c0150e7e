// Compiles result.hpp alone: it must include everything it uses.
#include "epsjoin/result.hpp"
