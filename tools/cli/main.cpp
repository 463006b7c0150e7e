#include <cstdio>
int main() { std::puts("epsjoin: CLI under construction"); }
