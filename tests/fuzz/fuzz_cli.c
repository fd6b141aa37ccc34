/* rocke fuzz — the CLI's argument parsers (tools/cli_opts.c, cli_shape.c):
 * the input, split at NUL and newline bytes, is an argument vector for an
 * option table holding every option kind, and each argument is also read as
 * a --shape (gemm and softmax) and an --arg. Properties: no crash, leak or
 * UB; cli_parse returns -1 (go on), 0 (help) or 2 (misuse); on success
 * every option was given at most once (repeated ones at most CLI_LIST_MAX
 * times) and every ranged number is inside its range. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "../../tools/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[40];
    int argc = 0;
    argv[argc++] = "rocke";
    for (size_t i = 0, start = 0; i <= size && argc < 39; i++)
        if (i == size || buf[i] == 0 || buf[i] == '\n') {
            buf[i] = 0;
            argv[argc++] = buf + start;
            start = i + 1;
        }
    argv[argc] = NULL;

    bool flag = false;
    const char *str = NULL, *path = NULL, *pos[4] = {0};
    uint32_t u32 = 0, r32 = 7;
    uint64_t u64 = 0;
    int64_t i64 = 0;
    double dbl = 0, rd = 0.5;
    const rk_target *tgt = NULL;
    cli_list list = {{0}, 0};
    cli_opt opts[] = {
        {.name = "--flag", .alias = 'f', .kind = CLI_FLAG, .dst = &flag, .help = "a flag"},
        {.name = "--str", .kind = CLI_STRING, .dst = &str, .meta = "S", .help = "a string", .legal = "a|bb|ccc"},
        {.name = "--path", .alias = 'o', .kind = CLI_PATH, .dst = &path, .meta = "P", .help = "a path"},
        {.name = "--u32", .kind = CLI_U32, .dst = &u32, .meta = "N", .help = "u32"},
        {.name = "--r32", .kind = CLI_U32, .dst = &r32, .meta = "N", .help = "ranged", .ranged = true, .lo = 1, .hi = 64},
        {.name = "--u64", .kind = CLI_U64, .dst = &u64, .meta = "N", .help = "u64"},
        {.name = "--i64", .kind = CLI_I64, .dst = &i64, .meta = "N", .help = "i64"},
        {.name = "--dbl", .kind = CLI_DOUBLE, .dst = &dbl, .meta = "X", .help = "double"},
        {.name = "--rd", .kind = CLI_DOUBLE, .dst = &rd, .meta = "X", .help = "ranged double", .ranged = true,
         .dlo = 0, .dhi = 1},
        {.name = "--target", .kind = CLI_TARGET, .dst = &tgt, .meta = "T", .help = "target", .legal = "device"},
        {.name = "--many", .kind = CLI_REPEATED, .dst = &list, .meta = "V", .help = "repeated"},
        {0},
    };
    cli_cmd cmd = {"fuzz", "[A [B]]", "the fuzz command", NULL, opts, pos, 0, 2};
    int rc = cli_parse(&cmd, argc, argv, 1);
    RK_FUZZ_CHECK("fuzz_cli", rc == -1 || rc == 0 || rc == 2);
    if (rc == -1) {
        for (cli_opt *o = opts; o->name; o++)
            RK_FUZZ_CHECK("fuzz_cli", o->kind == CLI_REPEATED ? o->seen <= CLI_LIST_MAX : o->seen <= 1);
        RK_FUZZ_CHECK("fuzz_cli", r32 >= 1 && r32 <= 64);
        RK_FUZZ_CHECK("fuzz_cli", rd >= 0 && rd <= 1);
        RK_FUZZ_CHECK("fuzz_cli", !str || cli_list_has("a|bb|ccc", '|', str));
        RK_FUZZ_CHECK("fuzz_cli", list.n <= CLI_LIST_MAX);
        if (list.n) (void)cli_names_unique("fuzz", "--many", &list);
    }
    for (int i = 1; i < argc; i++) {
        rk_shape s;
        if (rk_shape_default(RK_FAMILY_GEMM, &s) == RK_OK && cli_shape_parse("fuzz", RK_FAMILY_GEMM, argv[i], &s))
            for (uint32_t d = 0; d < s.rank; d++) RK_FUZZ_CHECK("fuzz_cli", s.dim[d] >= 1);
        if (rk_shape_default(RK_FAMILY_SOFTMAX, &s) == RK_OK)
            (void)cli_shape_parse("fuzz", RK_FAMILY_SOFTMAX, argv[i], &s);
        cli_arg a;
        if (cli_arg_parse("fuzz", argv[i], &a)) RK_FUZZ_CHECK("fuzz_cli", memchr(a.name, 0, sizeof a.name) != NULL);
    }
    free(buf);
    return 0;
}
