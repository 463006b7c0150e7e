// Compiles dbscan.hpp alone: it must include everything it uses.
#include "epsjoin/dbscan.hpp"
