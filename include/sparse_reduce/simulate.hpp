#pragma once
/// @file
/// The simulators, for tuning and for studying trees without a cluster:
/// sparse_reduce::simulate_reduce (P virtual ranks running the executor's own
/// per-rank programs on a modelled clock, sim/simulator.hpp),
/// sparse_reduce::simulate_started_reduce (a started reduce behind
/// computation, and its overlap, sim/started.hpp) and the 2D mesh
/// network of namespace sparse_reduce::mesh (sim/mesh_network.hpp).
/// Not part of `<sparse_reduce/sparse_reduce.hpp>`: a program that only
/// reduces does not parse them; one that simulates includes them all.

#include "sim/mesh_network.hpp"
#include "sim/simulator.hpp"
#include "sim/started.hpp"
