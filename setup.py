"""Build of the optional C extension (everything else is in pyproject.toml).

``dlqlens.capture._scan`` holds the byte loops of the fast text readers (a
block's line table, hex runs, rows compared with a first row, amqsbcg's
descriptor and dump lines). It is
optional: without a C compiler the install goes on and
:mod:`dlqlens.capture.scan` uses its numpy versions.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dlqlens.capture._scan", ["dlqlens/capture/_scan.c"],
                             extra_compile_args=["-O2"], optional=True)])
