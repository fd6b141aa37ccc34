/* rocke — the whole public C API. */
#ifndef ROCKE_H
#define ROCKE_H

#include "rocke/base.h"
#include "rocke/ir.h"

#endif
