// Compiles sink.hpp alone: it must include everything it uses.
#include "epsjoin/sink.hpp"
