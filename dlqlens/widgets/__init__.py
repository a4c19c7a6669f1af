"""Notebook views (ipywidgets) over captures and explanations.

Widgets arrange the data objects of :mod:`dlqlens.explain`; they compute
nothing of their own that a report or the command line would need.
"""

from dlqlens.widgets.browser import browse

__all__ = ["browse"]
