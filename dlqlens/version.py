"""The version of dlqlens, from the installed package's metadata.

:func:`version` reads it with :func:`importlib.metadata.version` (what pip
installed, ``pyproject.toml``'s ``version``); when dlqlens runs from a source
tree that is not installed (``PYTHONPATH=.``), it reads ``pyproject.toml``
beside the package instead, and says ``unknown`` when neither is there.
``dlqlens --version`` prints it; ``dlqlens.__version__`` is it.
"""

from __future__ import annotations

from pathlib import Path

#: What :func:`version` says when neither the metadata nor ``pyproject.toml`` tells.
UNKNOWN = "unknown"


def version() -> str:
    """The version string of dlqlens (``"0.1.0"``), or :data:`UNKNOWN`."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("dlqlens")
    except PackageNotFoundError:
        return source_version()


def source_version(root: Path | None = None) -> str:
    """The ``[project] version`` of ``pyproject.toml`` in ``root`` (by default the
    directory above the package), or :data:`UNKNOWN` when it is absent or unreadable."""
    import tomllib

    path = (root if root is not None else Path(__file__).resolve().parent.parent) / "pyproject.toml"
    try:
        with open(path, "rb") as fh:
            project = tomllib.load(fh).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return UNKNOWN
    found = project.get("version")
    return found if isinstance(found, str) and found else UNKNOWN
