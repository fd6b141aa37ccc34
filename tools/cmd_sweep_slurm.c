/* rocke sweep --slurm — placeholder until written. Layer: tools. */
#include "sweep_int.h"
int sw_slurm_submit(const sw_opts *o, uint32_t nitems) { (void)o; (void)nitems; return 1; }
