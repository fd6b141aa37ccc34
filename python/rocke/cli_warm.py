"""python -m rocke warm --target sm_90a --cache DIR (--script FILE [ARGS...] |
--list FILE) [--check]: compile every kernel a script's (or a list's)
rocke.ops calls would need on a GPU of that target into the compile cache
DIR, for a machine without LLVM (ROCKE_CACHE_DIR=DIR there). --check
compiles nothing (toolchain none, as such a machine) and fails on the first
kernel missing from DIR. Layer: python bindings."""
import argparse
import os
import runpy
import sys
import time

from ._lib import RockeError

USAGE = ("usage: python -m rocke warm --target T --cache DIR (--script FILE [ARGS...] | --list FILE)... [--check]\n"
         "  --target T      the GPU the cache is for: sm_80, sm_90 or sm_90a (an H100 / H200); each op compiles\n"
         "                  for the target its GPU path picks there (sm_90 for most families, sm_90a for wgmma)\n"
         "  --cache DIR     the compile cache to fill (created; ROCKE_CACHE_DIR=DIR on the GPU machine)\n"
         "  --script FILE   run FILE (with ARGS: everything after it) in record mode: its rocke.ops calls on\n"
         "                  numpy arrays or rocke._warm.Spec stand-ins compile instead of running\n"
         "  --list FILE     one call per line: `softmax f16[37,1000]`, `rms_norm f16[8,512,1024] f16[1024] 1e-6`,\n"
         "                  `gemm e4m3[300,1024] e4m3[520,1024].T scale='tensor' a_scale=f32[1] b_scale=f32[1]`,\n"
         "                  or `kernel FAMILY D0xD1.. TARGET KNOB=VALUE ...` (the line a GPU miss prints)\n"
         "  --check         compile nothing: fail unless every kernel is already in DIR")


def _tree_bytes(d):
    files = size = 0
    for root, _, names in os.walk(d):
        for n in names:
            files += 1
            size += os.path.getsize(os.path.join(root, n))
    return files, size


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    script_args = []
    if "--script" in argv:                      # everything after the script's path is its own
        i = argv.index("--script")
        script_args = argv[i + 2:]
        argv = argv[:i + 2]
    ap = argparse.ArgumentParser(prog="python -m rocke warm", add_help=False)
    ap.add_argument("--target", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--script")
    ap.add_argument("--list", action="append", default=[])
    ap.add_argument("--check", action="store_true")
    try:
        a = ap.parse_args(argv)
    except SystemExit:
        print(USAGE, file=sys.stderr)
        return 2
    if not a.script and not a.list:
        print("python -m rocke warm: give --script FILE or --list FILE\n" + USAGE, file=sys.stderr)
        return 2
    cache = os.path.abspath(a.cache)
    os.makedirs(cache, exist_ok=True)
    os.environ["ROCKE_CACHE_DIR"] = cache       # read by every compile (rk_compile_options_default)
    os.environ.pop("ROCKE_CACHE", None)
    if a.check:
        os.environ["ROCKE_TOOLCHAIN"] = "none"
    from . import _warm
    t0 = time.perf_counter()
    try:
        with _warm.recording(a.target) as rec:
            for path in a.list:
                _warm.run_list(rec, path)
            if a.script:
                saved = sys.argv, list(sys.path)
                sys.argv = [a.script] + script_args
                sys.path.insert(0, os.path.dirname(os.path.abspath(a.script)))    # as `python FILE` has it
                try:
                    runpy.run_path(a.script, run_name="__main__")
                except SystemExit as e:
                    if e.code not in (None, 0):
                        raise RockeError("%s exited with %s" % (a.script, e.code))
                finally:
                    sys.argv, sys.path[:] = saved
    except RockeError as e:
        print("rocke warm: %s" % e, file=sys.stderr)
        return 1
    hits = 0
    for k in rec.kernels.values():
        hits += k["hit"]
        print("warm: %-58s %-7s %s (%.1f ms)" % (k["name"], k["target"], "in the cache" if k["hit"] else "compiled",
                                                 k["ms"]))
    files, size = _tree_bytes(cache)
    print("warm: %d kernels (%d compiled, %d already in the cache) in %.1f s; %s: %d files, %.2f MiB"
          % (len(rec.kernels), len(rec.kernels) - hits, hits, time.perf_counter() - t0, cache, files, size / 2 ** 20))
    return 0
