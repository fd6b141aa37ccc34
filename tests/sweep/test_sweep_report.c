/* rocke tests — `rocke sweep report`: the table's best config per shape
 * against the fastest verified record found here, the SVG files, a
 * report.html that fetches nothing and runs no script, and the page laid
 * out by headless Chromium: a probe added to a copy of the page measures
 * every plotted mark (skipped, saying so, where Chromium is missing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/sweep_fixture.h"

static char dir[64];
static uint32_t nok;   /* verified records of the sweep */

static int setup(void **state) {
    (void)state;
    if (access(SWEEP_ROCKE, X_OK) || !sweep_tmpdir(dir, "report")) return -1;
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 --dtype f16 --shapes '3,%u;2,%u' "
                             "--knob block_size=32,64 --knob vec=2,4 --devices emu:2 -q -o rep",
                             65 + 2 * sweep_rand(30), 131 + 2 * sweep_rand(60));
    int rc = r.rc;
    if (rc) fprintf(stderr, "%s%s", r.out, r.err);
    rk_test_run_free(&r);
    return rc;
}

static int teardown(void **state) {
    (void)state;
    sweep_rmdir(dir);
    return 0;
}

static char *slurp(const char *name, size_t *n) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = malloc(1 << 20);
    *n = fread(buf, 1, (1 << 20) - 1, f);
    buf[*n] = 0;
    fclose(f);
    return buf;
}

static void test_table_and_files(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep report rep");
    if (r.rc) fprintf(stderr, "%s", r.err);
    assert_int_equal(r.rc, 0);
    uint32_t n;
    rk_json **rec = sweep_records(dir, "rep", &n);
    /* the fastest verified record of each shape must head that shape's row */
    nok = 0;
    for (uint32_t i = 0; i < n; i++) {
        const rk_json *x = rec[i];
        if (strcmp(sweep_str(x, "status"), "ok")) continue;
        nok++;
        bool best = true;
        for (uint32_t j = 0; j < n; j++)
            if (!strcmp(sweep_str(rec[j], "shape_text"), sweep_str(x, "shape_text")) &&
                !strcmp(sweep_str(rec[j], "status"), "ok") && sweep_num(rec[j], "ms") < sweep_num(x, "ms"))
                best = false;
        if (!best) continue;
        char key[256], row[300];
        snprintf(key, sizeof key, "%s", sweep_str(x, "key"));
        *strchr(key, '@') = 0;
        snprintf(row, sizeof row, "%s  (%s)", key, sweep_str(x, "kernel"));
        assert_non_null(strstr(r.out, row));
        assert_non_null(strstr(r.out, sweep_str(x, "shape_text")));
    }
    sweep_records_free(rec);
    rk_test_run_free(&r);
    assert_true(nok >= 4);
    size_t len;
    static const char *const files[] = {"rep/plots/roofline.svg", "rep/plots/knob_vec.svg",
                                        "rep/plots/knob_block_size.svg"};
    for (size_t i = 0; i < 3; i++) {
        char *svg = slurp(files[i], &len);
        assert_non_null(svg);
        assert_true(strstr(svg, "<svg") == svg && strstr(svg, "</svg>") && strstr(svg, "class=\"point\""));
        free(svg);
    }
    char *html = slurp("rep/report.html", &len);
    assert_non_null(html);
    assert_int_equal(rk_test_count(html, "<svg"), 3);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "src="));
    assert_null(strstr(html, "href="));
    assert_null(strstr(html, "https:"));
    free(html);
}

static const char *find_chromium(void) {
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
    static char path[256];
    for (size_t i = 0; i < 3; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "command -v %s", names[i]);
        FILE *p = popen(cmd, "r");
        if (!p) continue;
        bool got = fgets(path, sizeof path, p) != NULL;
        pclose(p);
        if (got) {
            path[strcspn(path, "\n")] = 0;
            return path;
        }
    }
    return NULL;
}

/* The probe (test-only, added to a copy): each plot's marks that have a
 * laid-out box inside their SVG. */
static const char probe[] =
    "<script>window.addEventListener('load', function () {"
    "var out = [];"
    "document.querySelectorAll('svg').forEach(function (s) {"
    "  var r = s.getBoundingClientRect(), pts = 0, lines = 0;"
    "  s.querySelectorAll('circle.point').forEach(function (c) {"
    "    var b = c.getBoundingClientRect();"
    "    if (b.width > 0 && b.left >= r.left && b.right <= r.right && b.top >= r.top && b.bottom <= r.bottom) pts++;"
    "  });"
    "  s.querySelectorAll('polyline.series, line.roof').forEach(function (l) {"
    "    if (l.getTotalLength() > 1) lines++; });"
    "  out.push(r.width + 'x' + r.height + ':' + pts + ':' + lines);"
    "});"
    "document.body.setAttribute('data-probe', out.join(' '));});</script>";

static void test_chromium_draws_the_plots(void **state) {
    (void)state;
    const char *chromium = find_chromium();
    if (!chromium) {
        fprintf(stderr, "test_sweep_report: Chromium not found (apt-get install chromium): the rendering check is "
                "skipped\n");
        skip();
    }
    size_t len;
    char *html = slurp("rep/report.html", &len);
    assert_non_null(html);
    char *end = strstr(html, "</body>");
    assert_non_null(end);
    char path[128];
    snprintf(path, sizeof path, "%s/probe.html", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "%.*s%s%s", (int)(end - html), html, probe, end);
    fclose(f);
    free(html);
    rk_test_run r = sweep_sh(dir, "timeout 120 '%s' --headless --no-sandbox --disable-gpu --no-first-run "
                             "--user-data-dir=%s/chrome --virtual-time-budget=2000 --dump-dom file://%s 2>/dev/null",
                             chromium, dir, path);
    assert_int_equal(r.rc, 0);
    const char *p = strstr(r.out, "data-probe=\"");
    if (!p) fprintf(stderr, "no probe result in: %.400s\n", r.out);
    assert_non_null(p);
    p += strlen("data-probe=\"");
    /* roofline: every verified record a mark, the roof drawn; each knob plot: marks and lines */
    char attr[512];
    snprintf(attr, sizeof attr, "%.*s", (int)strcspn(p, "\""), p);
    uint32_t plots = 0;
    for (char *q = strtok(attr, " "); q; q = strtok(NULL, " "), plots++) {
        unsigned w, h, pts, lines;
        assert_int_equal(sscanf(q, "%ux%u:%u:%u", &w, &h, &pts, &lines), 4);
        assert_true(w >= 600 && h >= 380);
        if (plots == 0) assert_int_equal(pts, nok);
        else assert_true(pts >= 2);
        assert_true(lines >= 1);
    }
    assert_int_equal(plots, 3);
    rk_test_run_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_and_files),
        cmocka_unit_test(test_chromium_draws_the_plots),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
