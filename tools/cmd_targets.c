/* rocke targets — list the targets with wave size, LDS size, native fp8
 * encoding and matrix atoms. Layer: tools. */
#include <stdio.h>
#include <string.h>

#include "rocke/rocke.h"
#include "cli.h"

int cmd_targets(int argc, char **argv) {
    cli_opt opts[] = {{0}};
    cli_cmd c = {.name = "targets", .args = "", .opts = opts,
                 .about = "Lists every target rocke compiles for: wave size, LDS per workgroup,\n"
                          "native 8-bit float encoding and the matrix atoms (tile.mma op_id) it offers."};
    int rc = cli_parse(&c, argc, argv, 1);
    if (rc >= 0) return rc;
    for (const rk_target *const *tp = rk_targets(); *tp; tp++) {
        const rk_target *t = *tp;
        printf("%s%s  %s %s  wave %u  LDS %u KiB  fp8 %s\n", t->name, t == rk_target_default() ? " (default)" : "",
               t->vendor == RK_VENDOR_AMD ? "AMD" : "NVIDIA", t->family, t->wave_size, t->lds_bytes / 1024,
               t->fp8 ? rk_scalar_name(t->fp8) : "none");
        printf("  atoms:");
        int n = 0;
        for (const rk_mma_atom *const *a = rk_mma_atoms(); *a; a++)
            if (rk_target_has_atom(t, *a)) printf("%s %s", n++ % 4 ? "," : "\n   ", (*a)->op_id);
        printf("%s\n", n ? "" : " none");
    }
    return 0;
}
