"""Sphinx extension for the course website: write each <script> of a page once.

Sphinx 7.4 emits every inline script that an extension registers after the builder has started
twice (sphinx-doc/sphinx#13402, fixed in Sphinx 8, which Jupyter Book 1 cannot use). The second
copy of sphinx-thebe's ``const THEBE_JS_URL = ...`` then throws "Identifier has already been
declared" in the reader's console. This extension drops the repeats from each page's script list.
"""

from __future__ import annotations


def _key(script) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    if isinstance(script, str):  # an old-style entry: just a file name
        return (script, 500, ())
    return (
        str(getattr(script, "filename", "") or ""),
        getattr(script, "priority", 500),
        tuple(sorted((str(k), str(v)) for k, v in attributes.items())),
    )


def _deduplicate(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", _deduplicate, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
