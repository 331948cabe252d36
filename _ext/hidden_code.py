"""Sphinx extension for the course website: a hidden code cell's toggle is named by the words it shows.

myst-nb draws the toggle of a cell tagged ``hide-input`` as ``<summary aria-label="Toggle hidden
content">`` around the visible words "Show code cell source". A screen reader then announces a name
that is not the visible label, and a speech-input user who says "click show code cell source" hits
nothing (WCAG 2.5.3, Label in Name; axe-core's ``label-content-name-mismatch``). This extension writes
the same markup without the ``aria-label``, so that the summary's name is its visible text.

It registers the markup for the ``singlehtml`` builder too (the PDF's): Sphinx looks a node's handlers
up by the builder's name first, and since other extensions register some for ``singlehtml``, myst-nb's,
given for ``html`` only, are not found there and the single-page build stops at the first hidden cell.
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
    markup = (visit_hidden_code, depart_HideCellInput)
    app.add_node(HideCodeCellNode, override=True, html=markup, singlehtml=markup)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
