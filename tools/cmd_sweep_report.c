/* rocke sweep report — placeholder until written. Layer: tools. */
#include "sweep_int.h"
int sw_report(int argc, char **argv) { (void)argc; (void)argv; return 1; }
