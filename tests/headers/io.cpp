// Compiles io.hpp alone: it must include everything it uses.
#include "epsjoin/io.hpp"
