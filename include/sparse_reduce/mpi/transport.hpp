#pragma once
// The transport layer below every algorithm, in one include: the private
// communicator (communicator.hpp), raw byte transfers with 1 GiB chunking
// (bytes.hpp), every MPI tag the library uses (tags.hpp) and the agreement
// on the first failing rank (first_failure.hpp).

#include "bytes.hpp"
#include "communicator.hpp"
#include "first_failure.hpp"
#include "tags.hpp"
