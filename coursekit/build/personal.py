"""Each student's own notebook: a student notebook with the numbers and the option order of a variant.

``python -m coursekit assign`` makes, beside each student notebook, a **template**: the student
notebook as ``otter assign`` writes it, less the master's ``variant`` cells, with the markers of the
varying numbers still in its prompts. :func:`personalise` turns the template into the notebook of one
variant (:class:`coursekit.grading.variant.Variants`); variant 0 is the public student notebook.

The markers, in a master's markdown: a number of a question's ``PUBLIC`` followed by an HTML comment
that names its key, ``$0.6$<!--v:mean-->`` or ``20<!--v:cost_fp-->``, or a longer text between
``<!--v:key-->`` and ``<!--/v-->`` (nothing shows in the master, which reads and runs as variant 0); in a
code cell the student sees, an assignment of a literal whose first line ends ``# v:key``. :func:`template`
checks that each marked text is ``str(PUBLIC[key])`` (a literal, ``PUBLIC[key]``), so that the master and
the public notebook say the same; :func:`personalise` writes the variant's value there and drops the
marker. A question whose options shuffle has its ``- (x) ...`` lines reordered (the letters stay in place),
and a statement with a not-form (an option ending in ``<!--not: the statement with the opposite
truth-->``) shows the form the variant draws; its public tests and the grader translate the student's
letters and forms back (:func:`coursekit.choices.translate`, with the order and the forms kept in the
notebook's metadata).

Every student notebook records ``metadata.coursekit.variant``, the tag of its variant
(:meth:`~coursekit.grading.variant.Variants.tag`), which ``make grade`` compares with the tag of the
notebook's owner; and the public tests of a question with numbers get the student's ``VARIANT`` (its
keys without ``_``).

Derived for the course machinery; not part of the lecture.
"""

from __future__ import annotations

import ast
import copy
import re

import nbformat
import yaml

from coursekit.grading.variant import PUBLIC, VARIANT_TAG, VariantError, Variants, parse_cell, private, seen

__all__ = ["MARKER", "TEMPLATE", "answer_for", "declarations", "personalise", "template"]

# The student notebook with the markers of its varying numbers, beside otter's output in dist/assign/NAME/.
TEMPLATE = "template.ipynb"

MARKER = re.compile(r"(?P<value>[^\s$(<>]+?)(?P<close>\$?)<!--v:(?P<key>[A-Za-z_]\w*)-->")
# a span's text holds no marker: a number's marker followed by a span later in the cell is not a span
SPAN = re.compile(r"<!--v:(?P<key>[A-Za-z_]\w*)-->(?P<value>(?:(?!<!--v:).)*?)<!--/v-->", re.S)
CODE_MARKER = re.compile(r"#\s*v:(?P<key>[A-Za-z_]\w*)\b")
OPTION = re.compile(r"^- \((?P<letter>[a-z])\) ", re.M)
NOT_FORM = re.compile(r"\s*<!--not:(?P<text>.*?)-->", re.S)
_PROMPT = "coursekit_options"  # cell metadata of a template's prompt whose options shuffle


def _question_blocks(nb: nbformat.NotebookNode):
    """Each question's config and prompt cell: ``(config, prompt index)``."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "raw" and cell.source.lstrip().startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(cell.source.split("\n", 1)[1]) or {}
            prompt = next((j for j in range(i + 1, len(nb.cells)) if nb.cells[j].cell_type == "markdown"), None)
            yield config, prompt


def option_lines(text: str) -> list[tuple[str, int, int]]:
    """The prompt's options: ``(letter, start, end)`` of each ``- (x) ...`` item (to the next item or a blank line)."""
    found = list(OPTION.finditer(text))
    items = []
    for k, match in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(text)
        blank = text.find("\n\n", match.start(), end)
        items.append((match["letter"], match.start(), end if blank < 0 else blank + 1))
    return items


def not_form(body: str) -> tuple[str, str | None]:
    """An option's text and its not-form (None without one): ``text<!--not: form-->`` ends the option."""
    match = NOT_FORM.search(body)
    if match is None:
        return body, None
    if body[match.end() :].strip():
        raise VariantError(f"a not-form must end its option; after it comes {body[match.end() :].strip()[:40]!r}")
    form = " ".join(match["text"].split())
    if not form or "<!--" in form:
        raise VariantError(f"a not-form needs a statement, one comment: {match.group(0).strip()[:60]!r}")
    return body[: match.start()] + body[match.end() :], form


def declarations(master: nbformat.NotebookNode) -> Variants:
    """A master's variant declarations: its ``variant`` cells, its questions with ``options: shuffle`` and their
    statements with a not-form."""
    variants = Variants()
    names = [config.get("name") for config, _ in _question_blocks(master)]
    for cell in master.cells:
        if cell.cell_type == "code" and VARIANT_TAG in cell.metadata.get("tags", []):
            question = parse_cell(cell.source)
            if question is None or question not in names:
                raise VariantError(
                    f"a cell tagged {VARIANT_TAG!r} must start with `# VARIANT qN`, qN a question of the notebook "
                    f"({', '.join(map(str, names))}); it starts {cell.source.lstrip()[:40]!r}"
                )
            if question in variants.sources:
                raise VariantError(f"{question} has two variant cells")
            if not re.search(r"^VARIANT = PUBLIC\s*$", cell.source, re.M):
                raise VariantError(f"{question}: its variant cell must end with `VARIANT = PUBLIC`")
            variants.sources[question] = cell.source
    for config, prompt in _question_blocks(master):
        if config.get("options") == "shuffle":
            letters = [letter for letter, _, _ in option_lines(master.cells[prompt].source)]
            if len(letters) < 2 or letters != [chr(ord("a") + k) for k in range(len(letters))]:
                raise VariantError(
                    f"{config['name']}: options: shuffle needs its prompt's options as lines `- (a) ...`, "
                    f"`- (b) ...` in order; found {letters}"
                )
            variants.options[config["name"]] = letters
            text = master.cells[prompt].source
            forms = [letter for letter, start, end in option_lines(text) if not_form(text[start:end])[1] is not None]
            if forms:
                variants.forms[config["name"]] = forms
        elif prompt is not None and NOT_FORM.search(master.cells[prompt].source):
            raise VariantError(f"{config.get('name')}: a not-form needs options: shuffle in the question's config")
    keys: dict[str, str] = {}
    for question in variants.sources:
        for key in seen(variants.space(question)["PUBLIC"]):  # a private key is never a marker's
            if key in keys:
                raise VariantError(f"{question} and {keys[key]} both have the key {key!r}: markers need one owner")
            keys[key] = question
    return variants


def _values(variants: Variants, seed: int) -> dict[str, object]:
    values = {}
    for entry in variants.of(seed).values():
        values.update(entry.get("params", {}))
    return values


def template(
    master: nbformat.NotebookNode, student: nbformat.NotebookNode, variants: Variants
) -> nbformat.NotebookNode:
    """The student notebook without the master's variant cells, its markers checked against ``PUBLIC``.

    ``student`` is the notebook ``otter assign`` wrote (not changed). Raises :class:`VariantError`
    where a marker names no key, a marked text is not ``str(PUBLIC[key])``, or a key is private.
    """
    nb = copy.deepcopy(student)
    declared = set(variants.sources.values())
    nb.cells = [c for c in nb.cells if not (c.cell_type == "code" and c.source in declared)]
    public = _values(variants, PUBLIC)
    for cell in nb.cells:
        if cell.cell_type == "code":
            for _, _, _, key, value in _code_markers(cell.source):
                _check_marked(key, value, public, "# v:")
            continue
        if cell.cell_type != "markdown":
            continue
        for match in SPAN.finditer(cell.source):
            _check_marked(match["key"], match["value"], {k: str(v) for k, v in public.items()}, "<!--v:")
        for match in MARKER.finditer(SPAN.sub("", cell.source)):
            _check_marked(match["key"], match["value"], {k: str(v) for k, v in public.items()}, "<!--v:")
    prompts = {config.get("name"): master.cells[prompt].source for config, prompt in _question_blocks(master)}
    for question in variants.options:
        cell = next((c for c in nb.cells if c.cell_type == "markdown" and c.source == prompts[question]), None)
        if cell is None:
            raise VariantError(f"{question}: its prompt is not in the student notebook as the master has it")
        cell.metadata[_PROMPT] = question
    return nb


def _check_marked(key: str, text, public: dict, marker: str) -> None:
    """A marked text (or a code literal's value) must be ``PUBLIC[key]``, a public key: the master shows variant 0."""
    if key not in public or private(key):
        raise VariantError(f"the marker {marker}{key} names no public key of a question's PUBLIC")
    if text != public[key]:
        raise VariantError(
            f"the marker {marker}{key} marks {text!r}, but PUBLIC has {public[key]!r}: the master must show variant 0"
        )


def _code_markers(source: str) -> list[tuple[int, int, str, str, object]]:
    """A code cell's marked assignments, ``NAME = literal  # v:key`` (the marker on the statement's first
    line; the literal may span lines): ``(first line, last line, NAME, key, the literal's value)``."""
    if not CODE_MARKER.search(source):
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines, found = source.splitlines(), []
    for node in tree.body:
        match = CODE_MARKER.search(lines[node.lineno - 1])
        if match is None:
            continue
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise VariantError(f"a code marker # v:{match['key']} must end the first line of `NAME = literal`")
        try:
            value = ast.literal_eval(node.value)
        except ValueError:
            raise VariantError(f"the code marker # v:{match['key']} marks something other than a literal") from None
        found.append((node.lineno, node.end_lineno, node.targets[0].id, match["key"], value))
    return found


def _with_values(source: str, values: dict) -> str:
    """A code cell's source with each marked assignment given the variant's value (and its marker dropped)."""
    lines = source.splitlines(keepends=True)
    for first, last, name, key, _ in reversed(_code_markers(source)):
        ending = "\n" if lines[last - 1].endswith("\n") else ""
        lines[first - 1 : last] = [f"{name} = {values[key]!r}{ending}"]
    return "".join(lines)


def personalise(nb: nbformat.NotebookNode, variants: Variants, seed: int) -> nbformat.NotebookNode:
    """The notebook of the variant of ``seed`` from a :func:`template` (not changed)."""
    nb = copy.deepcopy(nb)
    variant = variants.of(seed)
    values = _values(variants, seed)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = _with_values(cell.source, values)
            continue
        if cell.cell_type != "markdown":
            continue
        question = cell.metadata.pop(_PROMPT, None)
        if question is not None:
            cell.source = _shuffled(cell.source, variant[question]["options"], variant[question].get("flips", []))
        cell.source = SPAN.sub(lambda m: str(values[m["key"]]), cell.source)
        cell.source = MARKER.sub(lambda m: f"{values[m['key']]}{m['close']}", cell.source)
    tests = nb.metadata.get("otter", {}).get("tests", {})
    for question, entry in variant.items():
        if "params" in entry and question in tests:
            shown = seen(entry["params"])
            tests[question] = _with_variant(tests[question], shown)
    if variants:
        nb.metadata["coursekit"] = {
            "variant": variants.tag(seed),
            "options": {q: e["options"] for q, e in variant.items() if "options" in e},
        }
        if variants.forms:
            nb.metadata["coursekit"]["flips"] = {q: e["flips"] for q, e in variant.items() if "flips" in e}
    return nb


def _shuffled(text: str, order: dict[str, str], flips: list[str]) -> str:
    """``text`` with its option items in the student's order: item x shows the master's item ``order[x]``,
    in its not-form where the master's letter is in ``flips`` (and without the not-form's comment)."""
    items = option_lines(text)
    bodies = {}
    for letter, start, end in items:
        body, form = not_form(text[start + len(f"- ({letter}) ") : end])
        if letter in flips:
            body = form + body[len(body.rstrip()) :]
        bodies[letter] = body
    out, last = [], 0
    for letter, start, end in items:
        out.append(text[last:start])
        body = bodies[order[letter]]
        if not body.endswith("\n") and end < len(text):
            body += "\n"
        out.append(f"- ({letter}) {body}")
        last = end
    out.append(text[last:])
    return "".join(out)


def _with_variant(source: str, shown: dict) -> str:
    """A public test file's source with the student's ``VARIANT`` defined before its tests."""
    line = f"VARIANT = {shown!r}\n"
    marker = "OK_FORMAT = False\n"
    if marker not in source:
        raise VariantError("a public test file without `OK_FORMAT = False`: has otter assign changed what it writes?")
    return source.replace(marker, marker + "\n" + line, 1)


def answer_for(question: str, source: str, entry: dict) -> str:
    """An answer cell written for the master's variant, made an answer of the variant ``entry`` (for checks).

    A catalogued answer or a solution of a question with numbers reads them from ``VARIANT``: the cell
    gets the variant's ``VARIANT`` first, what the student sees of it (its keys without ``_``), so that no
    answer can use what only the grader knows, and its code markers (``NAME = literal  # v:key``, as in the
    student's answer cell) the variant's values. One of a question whose options shuffle is written in the
    master's letters and forms: the cell gets last lines that turn its ``question`` into the variant's
    (the inverse of :func:`coursekit.choices.translate`).
    """
    if "params" in entry:
        shown = seen(entry["params"])
        source = f"VARIANT = {shown!r}\n{_with_values(source, shown)}"
    order, flips = entry.get("options"), entry.get("flips", [])
    if order and (flips or any(student != master for student, master in order.items())):
        to_student = {master: student for student, master in order.items()}
        letters = sorted(order)
        source = (
            f"{source.rstrip()}\n"
            f"_to_student, _letters, _flips = {to_student!r}, {letters!r}, {set(flips)!r}\n"
            f"if isinstance({question}, str):\n"
            f"    {question} = _to_student.get({question}, {question})\n"
            f"elif isinstance({question}, (set, frozenset)):\n"
            f"    {question} = type({question})(_to_student.get(x, x) for x in set({question}) ^ _flips)\n"
            f"elif isinstance({question}, (tuple, list)) and len({question}) == len(_letters) and all(\n"
            f"    isinstance(x, bool) for x in {question}\n"
            f"):\n"
            f"    _truth = {{m: v != (m in _flips) for m, v in zip(_letters, {question})}}\n"
            f"    {question} = type({question})(_truth[{order!r}[s]] for s in _letters)\n"
        )
    return source
