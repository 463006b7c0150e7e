// Compiles partition.hpp alone: it must include everything it uses.
#include "epsjoin/partition.hpp"
