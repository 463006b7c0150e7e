// Compiles radii.hpp alone: it must include everything it uses.
#include "epsjoin/radii.hpp"
