// The umbrella header alone.
#include <sparse_reduce/sparse_reduce.hpp>

int main() { return 0; }
