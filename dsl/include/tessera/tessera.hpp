// The public API of tessera: include this one header.
#pragma once
#include "tessera/args.hpp"
#include "tessera/control.hpp"
#include "tessera/dtype.hpp"
#include "tessera/element.hpp"
#include "tessera/error.hpp"
#include "tessera/export.hpp"
#include "tessera/half.hpp"
#include "tessera/kernel.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops.hpp"
#include "tessera/tile.hpp"
