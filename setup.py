"""The one thing pyproject.toml cannot declare without an experimental table: the vector scan's
int8 kernel (src/naturali/retrieval/_int8_dot.c, AVX-512 VNNI). It is optional: without a C
compiler the install goes on and the scan uses numkong's kernel (retrieval/int8_scan.py)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "naturali.retrieval._int8_dot",
            sources=["src/naturali/retrieval/_int8_dot.c"],
            # The same float32 sums as numpy's: no fused multiply-adds.
            extra_compile_args=["-O3", "-ffp-contract=off"],
            optional=True,
        )
    ]
)
