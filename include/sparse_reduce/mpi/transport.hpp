#pragma once
// The transport layer below every algorithm, in one include: the private
// communicator (communicator.hpp), raw byte transfers with 1 GiB chunking
// (bytes.hpp) and every MPI tag the library uses (tags.hpp).

#include "bytes.hpp"
#include "communicator.hpp"
#include "tags.hpp"
