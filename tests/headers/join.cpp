// Compiles join.hpp alone: it must include everything it uses.
#include "epsjoin/join.hpp"
