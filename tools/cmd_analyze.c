/* rocke analyze — registers, LDS, scratch, spills and occupancy of each
 * kernel in an HSACO, optionally instruction counts from the disassembly;
 * text or JSON. Exit 0 ok, 1 on errors, 2 on misuse. Layer: tools. */
#include <stdio.h>
#include <string.h>

#include "rocke/rocke.h"
#include "rocke/analysis.h"
#include "base/base_int.h"
#include "cli.h"

int cmd_analyze(int argc, char **argv);

static void print_text(const rk_hsaco_info *info, const rk_isa_stats *isa) {
    printf("target %s\n", info->target[0] ? info->target : "(none)");
    for (uint32_t i = 0; i < info->nkernels; i++) {
        const rk_kernel_resources *k = &info->kernels[i];
        printf("kernel %s\n", k->name);
        printf("  VGPR %u (arch %u, AGPR %u)  SGPR %u  LDS %u B  scratch %u B/lane  spills VGPR %u SGPR %u\n",
               k->vgpr_count, k->arch_vgpr_count, k->agpr_count, k->sgpr_count, k->lds_bytes, k->scratch_bytes,
               k->vgpr_spill_count, k->sgpr_spill_count);
        printf("  kernarg %u B  wave %u  max workgroup %u%s\n", k->kernarg_size, k->wavefront_size,
               k->max_flat_workgroup_size, k->uses_dynamic_stack ? "  dynamic stack" : "");
        if (k->has_occupancy) {
            const rk_occupancy *o = &k->occ;
            printf("  occupancy on %s: %u workgroups/CU x %u waves = %u waves/CU (%u per SIMD), limited by %s\n",
                   info->t->name, o->wgs_per_cu, o->waves_per_wg, o->waves_per_cu, o->waves_per_simd,
                   rk_occ_limit_name(o->limited_by));
            printf("    limits: VGPR %u waves/SIMD (%u allocated), SGPR %u waves/SIMD, hardware %u waves/SIMD",
                   o->waves_by_vgpr, o->vgpr_alloc, o->waves_by_sgpr, o->max_waves_per_simd);
            if (o->lds_alloc) printf(", LDS %u workgroups/CU (%u B allocated)", o->wgs_by_lds, o->lds_alloc);
            printf("\n");
        } else {
            printf("  occupancy: unknown target (pass --target)\n");
        }
    }
    if (isa)
        printf("isa: %u instructions: MFMA %u, buffer load %u (to LDS %u) store %u, global load %u store %u, "
               "scratch load %u store %u, ds_read %u ds_write %u, s_waitcnt %u, s_barrier %u, VALU %u, SALU %u\n",
               isa->instructions, isa->mfma, isa->buffer_load, isa->buffer_load_lds, isa->buffer_store,
               isa->global_load, isa->global_store, isa->scratch_load, isa->scratch_store, isa->ds_read,
               isa->ds_write, isa->s_waitcnt, isa->s_barrier, isa->valu, isa->salu);
}

static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

static void print_json(const rk_hsaco_info *info, const rk_isa_stats *isa) {
    printf("{\"target\": ");
    json_str(info->target);
    printf(", \"arch\": ");
    json_str(info->arch);
    printf(", \"kernels\": [");
    for (uint32_t i = 0; i < info->nkernels; i++) {
        const rk_kernel_resources *k = &info->kernels[i];
        printf("%s{\"name\": ", i ? ", " : "");
        json_str(k->name);
        printf(", \"vgpr\": %u, \"arch_vgpr\": %u, \"agpr\": %u, \"sgpr\": %u, \"lds_bytes\": %u, "
               "\"scratch_bytes\": %u, \"vgpr_spill\": %u, \"sgpr_spill\": %u, \"kernarg_bytes\": %u, "
               "\"wavefront_size\": %u, \"max_flat_workgroup_size\": %u, \"uses_dynamic_stack\": %s",
               k->vgpr_count, k->arch_vgpr_count, k->agpr_count, k->sgpr_count, k->lds_bytes, k->scratch_bytes,
               k->vgpr_spill_count, k->sgpr_spill_count, k->kernarg_size, k->wavefront_size,
               k->max_flat_workgroup_size, k->uses_dynamic_stack ? "true" : "false");
        if (k->has_occupancy) {
            const rk_occupancy *o = &k->occ;
            printf(", \"occupancy\": {\"target\": \"%s\", \"waves_per_wg\": %u, \"wgs_per_cu\": %u, "
                   "\"waves_per_cu\": %u, \"waves_per_simd\": %u, \"limited_by\": \"%s\", \"vgpr_alloc\": %u, "
                   "\"waves_by_vgpr\": %u, \"waves_by_sgpr\": %u, \"wgs_by_lds\": %u, \"lds_alloc\": %u}",
                   info->t->name, o->waves_per_wg, o->wgs_per_cu, o->waves_per_cu, o->waves_per_simd,
                   rk_occ_limit_name(o->limited_by), o->vgpr_alloc, o->waves_by_vgpr, o->waves_by_sgpr,
                   o->wgs_by_lds == UINT32_MAX ? 0 : o->wgs_by_lds, o->lds_alloc);
        }
        printf("}");
    }
    printf("]");
    if (isa)
        printf(", \"isa\": {\"instructions\": %u, \"mfma\": %u, \"buffer_load\": %u, \"buffer_load_lds\": %u, "
               "\"buffer_store\": %u, \"global_load\": %u, \"global_store\": %u, \"scratch_load\": %u, "
               "\"scratch_store\": %u, \"ds_read\": %u, \"ds_write\": %u, \"s_waitcnt\": %u, \"s_barrier\": %u, "
               "\"valu\": %u, \"salu\": %u}",
               isa->instructions, isa->mfma, isa->buffer_load, isa->buffer_load_lds, isa->buffer_store,
               isa->global_load, isa->global_store, isa->scratch_load, isa->scratch_store, isa->ds_read,
               isa->ds_write, isa->s_waitcnt, isa->s_barrier, isa->valu, isa->salu);
    printf("}\n");
}

int cmd_analyze(int argc, char **argv) {
    const char *file = NULL;
    const rk_target *t = NULL;
    uint32_t wg_size = 0;
    bool json = false, want_isa = false, listing = false;
    cli_opt opts[] = {
        {.name = "--target", .kind = CLI_TARGET, .dst = &t, .meta = "T", .def = "",
         .help = "the target when the code object names none rocke knows (AMD only)"},
        {.name = "--wg", .kind = CLI_U32, .dst = &wg_size, .meta = "N", .ranged = true, .lo = 1, .hi = 1024,
         .help = "workgroup size for the occupancy (default: the kernel's maximum)"},
        {.name = "--json", .kind = CLI_FLAG, .dst = &json, .help = "one JSON object on standard output"},
        {.name = "--isa", .kind = CLI_FLAG, .dst = &want_isa,
         .help = "instruction counts from llvm-objdump -d (MFMA, buffer/global/scratch\n"
                 "loads and stores, ds_read/write, s_waitcnt, barriers, VALU, SALU)"},
        {.name = "--listing", .kind = CLI_FLAG, .dst = &listing, .help = "also print the disassembly (implies --isa)"},
        {0},
    };
    cli_cmd c = {.name = "analyze", .args = "FILE.hsaco", .opts = opts, .pos = &file, .min_pos = 1, .max_pos = 1,
                 .about = "Read the AMDGPU metadata of FILE (code object v4/v5) and print per kernel: VGPR\n"
                          "(unified VGPR+AGPR count, arch VGPRs, AGPRs), SGPR, LDS, scratch, spills, kernarg\n"
                          "size, wave size, max workgroup size, and the occupancy on the code object's target.\n"
                          "Exit 0 ok, 1 on errors, 2 on misuse.",
                 .more = "Occupancy formulas: docs/compile.md.\n"};
    int prc = cli_parse(&c, argc, argv, 1);
    if (prc >= 0) return prc;
    want_isa |= listing;
    if (t && t->vendor != RK_VENDOR_AMD)
        return cli_misuse(&c, "--target %s is not an AMD target; HSACO analysis covers gfx90a, gfx942, gfx950",
                          t->name);
    char *data;
    size_t n;
    if (rk_read_file(file, &data, &n) != RK_OK) return cli_fail("analyze");
    rk_hsaco_info info;
    if (rk_analyze_hsaco(data, n, t, &info) != RK_OK) {
        fprintf(stderr, "rocke analyze: %s: %s\n", file, rk_error_message());
        rk_free(data, n + 1);
        return 1;
    }
    for (uint32_t i = 0; wg_size && info.t && i < info.nkernels; i++)
        rk_occupancy_compute(info.t, &info.kernels[i], wg_size, &info.kernels[i].occ);
    rk_isa_stats isa;
    char *text = NULL;
    int rc = 0;
    if (want_isa && rk_analyze_isa(data, n, &isa, listing ? &text : NULL) != RK_OK) {
        fprintf(stderr, "rocke analyze: %s\n", rk_error_message());
        rc = 1;
    }
    if (rc == 0) {
        if (json) print_json(&info, want_isa ? &isa : NULL);
        else print_text(&info, want_isa ? &isa : NULL);
        if (text) fputs(text, stdout);
    }
    rk_string_free(text);
    rk_free(data, n + 1);
    return rc;
}
