"""rocke/_cuda.py against a stand-in driver (no GPU): a cooperative kernel
(manifest "cooperative": true) launches through cuLaunchKernelEx with one
CU_LAUNCH_ATTRIBUTE_COOPERATIVE (2) attribute of value 1 and the grid, block,
shared memory and stream of the call; others through cuLaunchKernel; the
packed argument buffer keeps tensor maps 64-byte aligned."""
import ctypes
import unittest

from rocke import RockeError, _cuda


class FakeDriver:
    """The driver calls Function makes; launches are recorded, decoded."""

    def __init__(self):
        self.calls = []

    def cuModuleLoadData(self, module, image):
        return 0

    def cuModuleGetFunction(self, fn, module, name):
        fn._obj.value = 0xF00
        return 0

    def cuFuncSetAttribute(self, fn, attr, value):
        self.calls.append(("attr", attr, value))
        return 0

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        self.calls.append(("plain", (gx, gy, gz), (bx, by, bz), smem, stream))
        return 0

    def cuLaunchKernelEx(self, cfg, fn, params, extra):
        c = cfg._obj
        attrs = [(c.attrs[i].id, int.from_bytes(bytes(c.attrs[i].value[:4]), "little", signed=True))
                 for i in range(c.numAttrs)]
        self.calls.append(("ex", (c.gridDimX, c.gridDimY, c.gridDimZ), (c.blockDimX, c.blockDimY, c.blockDimZ),
                           c.sharedMemBytes, c.hStream, attrs, fn.value, params[0]))
        return 0

    def cuGetErrorString(self, rc, out):
        return 0


class CudaShim(unittest.TestCase):
    def setUp(self):
        self.saved = _cuda._cu
        self.cu = _cuda._cu = FakeDriver()

    def tearDown(self):
        _cuda._cu = self.saved

    def test_layouts(self):
        self.assertEqual(ctypes.sizeof(_cuda.LaunchAttribute), 72)        # id, pad to 8, a 64-byte union
        self.assertEqual(_cuda.LaunchAttribute.value.offset, 8)
        self.assertEqual(ctypes.sizeof(_cuda.LaunchConfig), 56 if ctypes.sizeof(ctypes.c_void_p) == 8 else 40)
        self.assertEqual(_cuda.LaunchConfig.hStream.offset, 32)

    def test_cooperative_launch(self):
        fn = _cuda.Function(b"ptx", "k", 64 * 1024, cooperative=True)
        self.assertIn(("attr", 8, 64 * 1024), self.cu.calls)
        slot = ctypes.c_uint64(7)
        params = (ctypes.c_void_p * 1)(ctypes.addressof(slot))
        fn.launch((132, 2, 1), (256, 1, 1), 0xABC, params)
        kind, grid, block, smem, stream, attrs, f, p0 = self.cu.calls[-1]
        self.assertEqual((kind, grid, block, smem, stream), ("ex", (132, 2, 1), (256, 1, 1), 64 * 1024, 0xABC))
        self.assertEqual(attrs, [(2, 1)])
        self.assertEqual((f, p0), (0xF00, ctypes.addressof(slot)))

    def test_plain_launch(self):
        fn = _cuda.Function(b"ptx", "k", 0)
        fn.launch((3, 1, 1), (128, 1, 1), 0x5, (ctypes.c_void_p * 1)())
        self.assertEqual(self.cu.calls[-1], ("plain", (3, 1, 1), (128, 1, 1), 0, 0x5))

    def test_manifest_field(self):
        self.assertFalse(_cuda.cooperative_of({"kernel_name": "k"}))
        self.assertTrue(_cuda.cooperative_of({"kernel_name": "k", "cooperative": True}))
        self.assertFalse(_cuda.cooperative_of({"cooperative": False}))
        with self.assertRaisesRegex(RockeError, 'manifest k: "cooperative" must be true or false'):
            _cuda.cooperative_of({"kernel_name": "k", "cooperative": "yes"})

    def test_manifest_load(self):
        import json
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "k.ptx"), "wb") as f:
                f.write(b".version 8.0")
            for extra, coop in (({}, False), ({"cooperative": True}, True)):
                with open(os.path.join(d, "manifest.json"), "w") as f:
                    json.dump(dict({"kernel_name": "k", "binary": "k.ptx", "dyn_smem_min": 1024}, **extra), f)
                fn = _cuda.load_manifest(os.path.join(d, "manifest.json"))
                self.assertEqual((fn.cooperative, fn.dyn_smem), (coop, 1024))
                fn.launch((4, 1, 1), (64, 1, 1), 0x9, (ctypes.c_void_p * 1)())
                self.assertEqual(self.cu.calls[-1][0], "ex" if coop else "plain")

    def test_no_launch_ex(self):
        class Old(FakeDriver):
            cuLaunchKernelEx = None
        _cuda._cu = Old()
        with self.assertRaisesRegex(RockeError, "no cuLaunchKernelEx"):
            _cuda.Function(b"ptx", "k", 0, cooperative=True)

    def test_args_alignment(self):
        from rocke._sig_launch import param_ctype
        types = [param_ctype(True, "f16"), param_ctype(False, "i32"), param_ctype(False, "i32", "tensormap"),
                 param_ctype(False, "i64"), param_ctype(False, "f32", "tensormap")]
        a = _cuda.Args(types)
        self.assertEqual([ad % 64 for ad, t in zip(a.addresses, types) if ctypes.sizeof(t) == 128], [0, 0])
        self.assertEqual(a.addresses[3] % 8, 0)
        self.assertEqual([a.params[i] for i in range(5)], a.addresses)
        ends = [ad + ctypes.sizeof(t) for ad, t in zip(a.addresses, types)]
        self.assertTrue(all(e <= s for e, s in zip(ends, a.addresses[1:])))      # no overlap


if __name__ == "__main__":
    unittest.main()
