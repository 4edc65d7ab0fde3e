#pragma once
// The transport layer below every algorithm, in one include: the private
// communicator (communicator.hpp), raw byte transfers with 1 GiB chunking
// (bytes.hpp), every MPI tag the library uses (tags.hpp), the agreement
// on the first failing rank (first_failure.hpp) and on the dimension
// (dimension_agreement.hpp).

#include "bytes.hpp"
#include "communicator.hpp"
#include "dimension_agreement.hpp"
#include "first_failure.hpp"
#include "tags.hpp"
