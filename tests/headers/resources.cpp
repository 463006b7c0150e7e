// Compiles resources.hpp alone: it must include everything it uses.
#include "epsjoin/resources.hpp"
