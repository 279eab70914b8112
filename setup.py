"""Build script: compiles every Cython source in top-level ``pyx/`` into ``cfrkit._kernels``.

Adding a kernel means dropping ``pyx/<name>.pyx`` (and optionally ``pyx/<name>.pxd``); it is
built as ``cfrkit._kernels.<name>`` with no change here.
"""
import glob
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def kernel_extensions():
    extensions = []
    for source in sorted(glob.glob(os.path.join("pyx", "*.pyx"))):
        name = os.path.splitext(os.path.basename(source))[0]
        extensions.append(
            Extension(
                f"cfrkit._kernels.{name}",
                [source],
                include_dirs=[np.get_include(), "pyx"],
                # the range CFR kernels run a level's nodes on OpenMP threads
                # the range CFR kernels: OpenMP; no contraction into FMA in their AVX-512 builds, so every build
                # of a loop computes the same bits
                extra_compile_args=["-O3", "-fno-strict-aliasing"] + (
                    ["-fopenmp", "-ffp-contract=off"] if name.startswith("range_cfr") else []),
                extra_link_args=["-fopenmp"] if name.startswith("range_cfr") else [],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return extensions


setup(
    name="cfrkit",
    version="0.1.0",
    description="Toolkit for imperfect-information game research: fast CFR, poker, Hanabi, SymmToM.",
    long_description=open(os.path.join(HERE, "README.md")).read() if os.path.exists(os.path.join(HERE, "README.md")) else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=find_packages(include=["cfrkit", "cfrkit.*"]),
    package_data={"cfrkit.platform": ["static/*.html"], "cfrkit.cards": ["data/*.npy"]},
    ext_modules=cythonize(
        kernel_extensions(),
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
    install_requires=[
        "numpy>=1.24",
        "scikit-learn>=1.2",
        # sparse least squares of the AIVAT value table (evaluation/aivat_values.py)
        "scipy>=1.9",
        "POT>=0.9",
        "tqdm>=4.60",
        # the multi-agent environments are PettingZoo environments with Gymnasium spaces
        "gymnasium>=0.29",
        "pettingzoo>=1.24",
        "websockets>=13",
    ],
    extras_require={
        "torch": ["torch>=2.1"],
        "test": [
            "pytest>=7",
            # the layer contracts in pyproject.toml (tests/test_architecture.py)
            "import-linter>=2.17",
            "open_spiel>=1.4",
            "eval7>=0.1.10",
            "phevaluator>=0.5",
            "pokerkit>=0.5",
            "ray>=2.0",
        ],
        "bench": ["open_spiel>=1.4", "eval7>=0.1.10", "phevaluator>=0.5", "pokerkit>=0.5"],
        "plots": ["matplotlib>=3.5"],
        "distributed": ["ray>=2.0"],
    },
    entry_points={"console_scripts": ["cfrkit=cfrkit.cli:main"]},
    zip_safe=False,
)
