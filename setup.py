"""Build of the optional C extensions (everything else is in pyproject.toml).

``dlqlens.capture._scan`` holds the byte loops of the fast text readers (a
block's line table, hex runs, rows compared with a first row, amqsbcg's
descriptor and dump lines, dmpmqmsg's units); ``dlqlens.decode._fixed`` the one pass that takes
the fields out of a block of fixed structures (MQMD, MQDLH). Both are
optional: without a C compiler the install goes on and
:mod:`dlqlens.capture.scan` and :mod:`dlqlens.decode.fixed` use their numpy
versions.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dlqlens.capture._scan", ["dlqlens/capture/_scan.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("dlqlens.decode._fixed", ["dlqlens/decode/_fixed.c"],
                             extra_compile_args=["-O2"], optional=True)])
