"""rocke Python package: pure Python over librocke (ctypes); no compiled
extension. `pip install ./python` (offline: --no-build-isolation). A
librocke.so placed in rocke/ before installing is shipped inside the package."""
from setuptools import setup

setup(
    name="rocke",
    version="0.1.0",
    description="Author GPU kernels in Python over the rocke C library and run them",
    packages=["rocke"],
    package_data={"rocke": ["librocke.so*"]},
    python_requires=">=3.9",
)
