"""python -m rocke run DIR/manifest.json [--shape R,C] [--verify] [--device D]
[--warmup N] [--iters N] [--seed S]: the `rocke run` command from Python, on
the library's problems, references and timing; same output lines and exit
codes. Layer: python bindings."""
import argparse
import ctypes
import os
import sys
import time
from ctypes import CFUNCTYPE, c_bool, c_char_p, c_double, c_float, c_int, c_int32, c_size_t, c_uint32, c_uint64, c_void_p

from . import _manifest, _shape_api
from ._lib import RockeError, b, check, lib
from .compile import find_target
from .families import Instance
from .kernel import Kernel


class _DeviceOpts(ctypes.Structure):
    _fields_ = [("which", c_char_p), ("quiet", c_bool), ("emu_target", c_char_p), ("emu_options", c_void_p)]


class _ModuleImage(ctypes.Structure):
    _fields_ = [("kind", c_int), ("data", c_void_p), ("size", c_size_t), ("kernel", c_void_p),
                ("target", c_char_p), ("dyn_smem_min", c_uint32),
                ("cluster_dims", c_uint32 * 3)]


class _TimeOpts(ctypes.Structure):
    _fields_ = [("warmup", c_uint32), ("iters", c_uint32), ("flush_l2", c_bool), ("graph", c_bool),
                ("replays", c_uint32), ("stream", c_void_p)]


class _TimeResult(ctypes.Structure):
    _fields_ = [("clock", c_int), ("samples", c_uint32), ("runs_per_sample", c_uint32),
                ("median_ms", c_double), ("min_ms", c_double), ("max_ms", c_double), ("mean_ms", c_double),
                ("spread", c_double), ("burst_ms", c_double), ("flushed", c_bool), ("graph", c_bool)]


_WORK_FN = CFUNCTYPE(c_int, c_void_p, c_void_p)
_IMAGE = {"hsaco": 1, "ptx": 2, "cubin": 3, "ir": 4}
_DEV_EMU = 0


def _target_fits(built, dev, kind):
    if built == dev:
        return True
    if built.startswith("sm_") and dev.startswith("sm_"):
        bv, dv = int("".join(c for c in built[3:] if c.isdigit())), int("".join(c for c in dev[3:] if c.isdigit()))
        return bv <= dv if kind == "ptx" else (bv // 10 == dv // 10 and bv <= dv)
    return False


def _parse_shape(s):
    parts = s.split(",")
    try:
        vals = [int(p) for p in parts]
    except ValueError:
        return None
    if len(vals) not in (1, 2) or any(v <= 0 for v in vals):
        return None
    return tuple(vals) if len(vals) == 2 else (1, vals[0])


def _instance_of(m):
    """The instance of the manifest's family + spec (rk_manifest_check has
    checked every field against it)."""
    inst = Instance(m.family.decode())
    for s in m.spec[:m.nspec]:
        inst.set(s.key.decode(), s.value.decode())
    return inst


def run(argv):
    ap = argparse.ArgumentParser(prog="python -m rocke run", description=__doc__.split(":")[0])
    ap.add_argument("manifest")
    ap.add_argument("--shape")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--device")
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--iters", type=int)
    ap.add_argument("--seed", type=int)
    a = ap.parse_args(argv)
    if a.iters is not None and a.iters < 1:
        ap.error("--iters must be at least 1")
    seed = a.seed if a.seed is not None else int(time.time())
    m = _manifest.read(a.manifest)
    folder = os.path.dirname(a.manifest) or "."
    # every field against the spec and the binary (kernels.h rk_manifest_check)
    check(lib.rk_manifest_check(ctypes.byref(m), b(folder), None, None))
    inst = _instance_of(m)
    tname = m.target.decode()
    find_target(tname)
    inst.validate(tname)
    shp = tuple(m.default_shape[:m.ndefault_shape]) if m.ndefault_shape > 1 else (1, m.default_shape[0] if m.ndefault_shape else 1)
    if a.shape:
        shp = _parse_shape(a.shape)
        if shp is None:
            print("rocke run: --shape expects ROWS,COLS or N with positive integers, got %s" % a.shape,
                  file=sys.stderr)
            return 2
    names = ("M", "N") if len(shp) == 2 else ("N",)
    variant = _manifest.pick_variant(m, names, shp)
    if variant:     # the shape variant serving this shape, checked like any manifest
        m = _manifest.read(os.path.join(folder, variant))
        check(lib.rk_manifest_check(ctypes.byref(m), b(folder), None, None))
        inst = _instance_of(m)
        inst.validate(tname)
    inst.check_shape(shp)
    shape_txt, shape_list = _shape_api.shape_text(inst.family, shp)

    dev = c_void_p()
    opts = _DeviceOpts(b(a.device) if a.device else None, False, b(tname))
    check(lib.rk_device_open_opts(ctypes.byref(opts), ctypes.byref(dev)))
    keep, ptrs, mod = [], [], c_void_p()
    prob = None
    try:
        emu = lib.rk_device_kind_of(dev) == _DEV_EMU
        warmup = a.warmup if a.warmup is not None else (0 if emu else m.warmup_iters)
        iters = a.iters if a.iters is not None else (1 if emu else (m.timed_iters or 100))
        img = _ModuleImage(0, None, 0, None, b(tname) if tname else None, 0)
        if emu:
            if not m.ir:
                raise RockeError("manifest %s names no 'ir' file: the emulator runs ckdsl.ir" % m.kernel_name.decode())
            path = os.path.join(folder, m.ir.decode())
            with open(path, encoding="utf-8") as f:
                k = Kernel.parse(f.read())
            if k.name != m.kernel_name.decode():
                raise RockeError("%s does not hold kernel %s" % (path, m.kernel_name.decode()))
            keep.append(k)
            img.kind, img.kernel = _IMAGE["ir"], k._k
        else:
            dt = (lib.rk_device_target(dev) or b"").decode()
            kind = m.binary_kind.decode()
            if kind == "ir":
                raise RockeError("%s was built with --ir-only: it runs only on the emulator (--device emu)"
                                 % m.kernel_name.decode())
            if not tname or not _target_fits(tname, dt, kind):
                raise RockeError("manifest is for target %s but the device is %s (%s); rebuild with --target %s"
                                 % (tname or "(none)", lib.rk_device_name(dev).decode(), dt or "unknown target",
                                    dt or "device"))
            with open(os.path.join(folder, m.binary.decode()), "rb") as f:
                data = f.read()
            buf = ctypes.create_string_buffer(data, len(data))
            keep.append(buf)
            img.kind = _IMAGE.get(kind, _IMAGE["ptx"])
            img.data, img.size, img.dyn_smem_min = ctypes.addressof(buf), len(data), m.dyn_smem_min
        check(lib.rk_module_load_image(dev, ctypes.byref(img), ctypes.byref(mod)))
        fn = c_void_p()
        check(lib.rk_module_function(mod, m.kernel_name, ctypes.byref(fn)))
        dn = lib.rk_device_name(dev).decode()
        print("rocke run: %s on %s%s shape %s seed %d" % (m.kernel_name.decode(), dn,
              "" if tname in dn else " (%s)" % tname, shape_txt, seed))

        prob = _shape_api.Problem(inst._buf, inst.family, shp, seed)
        sig = prob.sig
        args = (c_void_p * _shape_api.KSIG_MAX)()
        for i in range(sig.n):
            p = sig.p[i]
            if p.ptr:
                data, nbytes = prob.buffer(i)
                d = c_uint64()
                check(lib.rk_mem_alloc(dev, nbytes, ctypes.byref(d)))
                ptrs.append(d)
                check(lib.rk_mem_copy_htod(dev, d.value, data, nbytes))
                slot = d
            elif p.type == 5:     # RK_S_I32
                slot = c_int32(int(prob.scalar(i)))
            else:
                slot = c_float(prob.scalar(i))
            keep.append(slot)
            args[i] = ctypes.cast(ctypes.pointer(slot), c_void_p)
        ptr_of = {i: d for i, d in zip([i for i in range(sig.n) if sig.p[i].ptr], ptrs)}
        grid, block = _shape_api.grid(inst._buf, inst.family, shp)
        g, bl = (c_uint32 * 3)(*grid), (c_uint32 * 3)(*block)

        def launch_once(_ud, stream):
            return lib.rk_launch(fn, g, bl, 0, stream, args)
        cb = _WORK_FN(launch_once)
        check(launch_once(None, None), "launch")
        check(lib.rk_device_synchronize(dev))
        mad, bad, total = 0.0, 0, 0
        if a.verify:
            for i in range(sig.n):
                if sig.p[i].ptr and sig.p[i].role == 1:
                    data, nbytes = prob.buffer(i)
                    check(lib.rk_mem_copy_dtoh(dev, data, ptr_of[i].value, nbytes))
            mad, bad, total, first = prob.check()
            print("verify max_abs_diff=%.8g bad=%d/%d" % (mad, bad, total))
            if bad:
                print("verify: first bad element %s" % first)
        to, tr = _TimeOpts(warmup, iters, False, False, 0, None), _TimeResult()
        check(lib.rk_time_launches(dev, cb, None, ctypes.byref(to), ctypes.byref(tr)))
        by, fl = _shape_api.cost(inst._buf, inst.family, shp)
        ms = tr.median_ms if tr.median_ms > 0 else 1e-9
        tflops, gbps = fl / 1e9 / ms, by / 1e6 / ms
        print("Perf: %.6g ms, %.6g TFlops, %.6g GB/s" % (ms, tflops, gbps))
        print('PerfJSON: {"ms": %.6g, "tflops": %.6g, "gbps": %.6g, "max_abs_diff": %.8g, "bad_count": %d, '
              '"total": %d, "min_ms": %.6g, "max_ms": %.6g, "kernel": "%s", "device": "%s", "target": "%s", '
              '"shape": [%s], "seed": %d, "verified": %s}'
              % (ms, tflops, gbps, mad, bad, total, tr.min_ms, tr.max_ms, m.kernel_name.decode(),
                 lib.rk_device_kind_name(lib.rk_device_kind_of(dev)).decode(), tname, shape_list, seed,
                 "true" if a.verify else "false"))
        return 1 if a.verify and bad else 0
    finally:
        for d in ptrs:
            lib.rk_mem_free(dev, d.value)
        if mod:
            lib.rk_module_unload(mod)
        lib.rk_device_close(dev)
        if prob is not None:
            prob.free()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m rocke run DIR/manifest.json [--shape ROWS,COLS] [--verify] [--device D]\n"
              "                          [--warmup N] [--iters N] [--seed S]\n"
              "       python -m rocke warm --target T --cache DIR (--script FILE [ARGS...] | --list FILE) [--check]")
        return 0 if argv else 2
    if argv[0] == "warm":
        from .cli_warm import main as warm
        return warm(argv[1:])
    if argv[0] != "run":
        print("python -m rocke: unknown command '%s' (legal: run, warm)" % argv[0], file=sys.stderr)
        return 2
    try:
        return run(argv[1:])
    except RockeError as e:
        print("rocke run: %s" % e, file=sys.stderr)
        # as the C tool (docs/cli.md, exit status): refused input (a bad manifest, spec, shape) is 2
        return 2 if e.status in ("invalid", "parse") else 1
