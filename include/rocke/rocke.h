/* rocke — the whole public C API. */
#ifndef ROCKE_H
#define ROCKE_H

#include "rocke/base.h"
#include "rocke/ir.h"
#include "rocke/target.h"
#include "rocke/lower.h"
#include "rocke/compile.h"
#include "rocke/analysis.h"
#include "rocke/emu.h"
#include "rocke/runtime.h"
#include "rocke/tile.h"
#include "rocke/tile_xform.h"
#include "rocke/tile_epilogue.h"
#include "rocke/tile_grid.h"
#include "rocke/tile_lds.h"
#include "rocke/tile_mma.h"
#include "rocke/kernels.h"
#include "rocke/manifest.h"

#endif
