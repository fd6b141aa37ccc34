/* rocke — tile helpers shared by the row-view files. Layer: tile. */
#ifndef ROCKE_TILE_ROW_INT_H
#define ROCKE_TILE_ROW_INT_H
#include "rocke/tile.h"

/* rk_tile_row_load of a realigned view (row_realign.c). */
void rk_tile_row_load_realigned(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                                rk_value *out);

#endif
