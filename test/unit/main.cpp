// Entry point of the unit_tests executable; the suites live in test_*.cpp.
// BOOST_TEST_DYN_LINK is defined by CMake (sparse_reduce_add_unit_test).
#define BOOST_TEST_MODULE sparse_reduce_unit
#include <boost/test/unit_test.hpp>
