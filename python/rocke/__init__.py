"""rocke: author GPU kernels in Python over librocke and run them (emulator,
CUDA through torch/CuPy/JAX). See python/README.md. Layer: python bindings."""
from . import families
from ._lib import RockeError, lib_path
from ._optable import OPS as _OPS
from .compile import Artifact, compile, default_target, targets
from .kernel import Kernel, Type, Value

__version__ = "0.1.0"


def op_names():
    """Every op of the op table, by wire name."""
    return [op.name for op in _OPS]


def launch(kernel, grid, block, *args, device="emu"):
    """Run an authored kernel on numpy arrays on the emulator (in place)."""
    from ._emu import launch_kernel
    launch_kernel(kernel, grid, block, args, device)


def parse(text):
    """A Kernel from ckdsl.ir v1 text."""
    return Kernel.parse(text)


def __getattr__(name):
    # rocke.ops imports numpy, rocke.torch_backend imports torch: only on use
    import importlib
    if name == "ops":
        return importlib.import_module(__name__ + ".ops")
    if name == "torch_backend":
        return importlib.import_module(__name__ + "._torch").torch_backend
    raise AttributeError("module 'rocke' has no attribute %r" % name)


__all__ = ["Kernel", "Type", "Value", "Artifact", "compile", "targets", "default_target", "families",
           "parse", "launch", "op_names", "RockeError", "lib_path"]
