#pragma once
#include <functional>
#include <vector>

#include "jit/interp/tile.hpp"

namespace tessera::interp {

// Runs a region on block arguments and returns what its yield gives.
using RegionRunner = std::function<std::vector<Tile>(const std::vector<Tile>& args)>;

// reduce / scan (ops.def) over `inputs`, calling `run_region` for each combine.
std::vector<Tile> eval_reduce(const ir::Op& op, const std::vector<const Tile*>& inputs, const RegionRunner& run_region);

}  // namespace tessera::interp
