// Compiles dataset.hpp alone: it must include everything it uses.
#include "epsjoin/dataset.hpp"
