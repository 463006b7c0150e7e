// Compiles index.hpp alone: it must include everything it uses.
#include "epsjoin/index.hpp"
