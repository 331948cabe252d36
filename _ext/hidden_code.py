"""Sphinx extension for the course website: a hidden code cell's toggle is named by the words it shows.

myst-nb draws the toggle of a cell tagged ``hide-input`` as ``<summary aria-label="Toggle hidden
content">`` around the visible words "Show code cell source". A screen reader then announces a name
that is not the visible label, and a speech-input user who says "click show code cell source" hits
nothing (WCAG 2.5.3, Label in Name; axe-core's ``label-content-name-mismatch``). This extension writes
the same markup without the ``aria-label``, so that the summary's name is its visible text.
"""

from __future__ import annotations

from html import escape

from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput


def visit_hidden_code(self, node) -> None:
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n')
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def setup(app):
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_code, depart_HideCellInput))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
