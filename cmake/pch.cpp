// The translation unit that builds the precompiled umbrella header (CMakeLists.txt, sparse_reduce_pch).
