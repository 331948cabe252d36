"""The instructor's report of a graded folder: ``make report`` (``python -m coursekit report FOLDER``).

Reads ``FOLDER/scores.csv`` (``make grade`` writes it, then this report) and writes
``FOLDER/report.html`` and ``FOLDER/gradebook.csv`` (:mod:`coursekit.grading.export`). The page is
one self-contained file: its histograms are SVG images inside it (matplotlib, Agg), it loads nothing
from anywhere, its tables scroll sideways on a narrow screen, and every figure has a text alternative
that gives its analysis. What it shows is computed by :mod:`coursekit.grading.item_analysis`; each
question's points come from the assignment's autograder zip, its named mistakes from
``notebooks/wrong-answers/<assignment>.yml``.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import re
import time
from pathlib import Path

import numpy as np
import yaml

from coursekit.grading import export
from coursekit.grading import item_analysis as analysis
from coursekit.grading.grader import Assignment
from coursekit.repository import DIST, MASTERS, log

WRONG_ANSWERS = MASTERS / "wrong-answers"  # the catalogue of named mistakes, one file per notebook
MOST_MISTAKES = 5  # named mistakes listed per question
MOST_REASONS = 3  # reasons listed of the answers the catalogue does not name
SLOWEST = 5  # submissions listed by the time they took

STYLE = """
:root { color-scheme: light; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1b1b;
       background: #fff; margin: 0 auto; padding: 1rem; max-width: 64rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.35rem; margin-top: 2.5rem; border-top: 2px solid #555;
     padding-top: 1rem; } h3 { font-size: 1.1rem; margin-top: 1.75rem; }
a { color: #0b4fb3; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5rem 0 1rem; }
.scroll:focus { outline: 3px solid #0b4fb3; outline-offset: 2px; }
table { border-collapse: collapse; font-size: 0.95rem; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { border: 1px solid #8a8a8a; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
thead th { background: #e8e8e8; }
.flag { font-weight: 600; color: #8a1c00; }
.same { background: #fff3c4; }
figure { margin: 1rem 0; } img { max-width: 100%; height: auto; }
figcaption { font-size: 0.95rem; }
dt { font-weight: 600; margin-top: 0.5rem; } dd { margin-left: 1rem; }
"""


def catalogue(assignment: str, folder: Path = WRONG_ANSWERS) -> dict[str, list[dict]]:
    """The catalogued wrong answers of an assignment's questions (empty where it has none)."""
    path = folder / f"{assignment}.yml"
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def points(assignment: str, autograders: Path) -> dict[str, float]:
    """Each question's points possible, as the assignment's autograder zip gives them."""
    zip_path = autograders / f"{assignment}-autograder.zip"
    if not zip_path.exists():
        raise SystemExit(
            f"no autograder {zip_path.name} in {autograders}: the report reads each question's "
            "points from it; pass the folder the grading used (--autograders) or run `make assignments`"
        )
    zipped = Assignment.load(zip_path)
    return {q: float(zipped.test_file(q).possible) for q in zipped.tests}


def histogram(summary: analysis.Assignment) -> tuple[str, str]:
    """The histogram of an assignment's totals: an SVG ``data:`` URI, and its text alternative."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    totals, possible = np.array(summary.totals), summary.possible
    width = max(1.0, float(np.ceil(possible / 25)))
    edges = np.arange(0.0, possible + width, width)
    edges[-1] = max(edges[-1], possible)
    counts, _ = np.histogram(totals, bins=edges)
    figure = Figure(figsize=(6.4, 3.0))
    axes = figure.subplots()
    axes.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="#2f5f98", edgecolor="white")
    axes.set_xlabel(f"total points (out of {possible:g})")
    axes.set_ylabel("submissions")
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    uri = "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode()
    ranges = "; ".join(f"{a:g} to {b:g}: {c}" for a, b, c in zip(edges[:-1], edges[1:], counts, strict=True))
    alt = (
        f"Histogram of the totals of the {len(totals)} graded submissions of {summary.name}, out of "
        f"{possible:g} points: mean {totals.mean():.1f}, median {np.median(totals):g}, lowest {totals.min():g}, "
        f"highest {totals.max():g}. Submissions per range of points (a range holds its lower end, the last "
        f"also its upper end): {ranges}."
    )
    return uri, alt


def _e(value) -> str:
    return html.escape(str(value))


def _slug(name: str) -> str:
    return "a-" + re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()


def _table(caption: str, header: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    """A table (cells already HTML) in a region that scrolls sideways on a narrow screen."""
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in header)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return (
        f'<div class="scroll" tabindex="0" role="region" aria-label="{_e(caption)}"><table>'
        f"<caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _n(count: int, word: str) -> str:
    """``1 submission``, ``2 submissions``."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def _share(value: float) -> str:
    return f"{100 * value:.1f}%"


def _questions(summary: analysis.Assignment) -> str:
    rows = []
    for q in summary.questions:
        power = "undefined" if q.discrimination is None else f"{q.discrimination:.2f}"
        flag = f'<span class="flag">review: {_e("; ".join(q.review))}</span>' if q.review else ""
        rows.append(
            [
                _e(q.name),
                f"{q.possible:g}",
                f"{q.mean:.2f}",
                f"{q.facility:.2f}",
                power,
                _share(q.faults["timed out"]),
                _share(q.faults["crashed"]),
                _share(q.faults["out of memory"]),
                flag,
            ]
        )
    return _table(
        f"Questions of {summary.name} ({len(summary.submissions)} graded submissions)",
        [
            "Question",
            "Points",
            "Mean",
            "Facility",
            "Discrimination",
            "Timed out",
            "Crashed",
            "Out of memory",
            "To review",
        ],
        rows,
        numeric=set(range(1, 8)),
    )


def _mistakes(summary: analysis.Assignment) -> str:
    parts = []
    for q in summary.questions:
        lost = sum(m.count for m in q.mistakes)
        if not lost:
            parts.append(f"<p>{_e(q.name)}: every graded answer earned full points.</p>")
            continue
        shown = [m for m in q.mistakes if m.named][:MOST_MISTAKES] + [m for m in q.mistakes if not m.named]
        rows = []
        for m in shown:
            label = _e(m.label)
            if not m.named:
                reasons = "; ".join(f"{_e(r)} ({c})" for r, c in m.reasons[:MOST_REASONS])
                more = f"; and {len(m.reasons) - MOST_REASONS} other reasons" if len(m.reasons) > MOST_REASONS else ""
                label = f"<em>{label}</em>: {reasons}{more}"
            rows.append([label, str(m.count), _share(m.count / lost)])
        named_count = sum(m.named for m in q.mistakes)
        caption = f"{q.name}: {lost} answers lost points; {named_count} named mistakes" + (
            f", the {min(named_count, MOST_MISTAKES)} most frequent shown" if named_count else ""
        )
        parts.append(
            _table(caption, ["Mistake", "Answers", "Share of the answers that lost points"], rows, numeric={1, 2})
        )
    return "".join(parts)


def _pairs(summary: analysis.Assignment, by_submission: dict[str, dict]) -> str:
    limit = analysis.unusual_limit(len(summary.submissions))
    intro = (
        f"<p>A wrong answer to a question is <strong>unusual</strong> when at most {limit} of the "
        f"{len(summary.submissions)} graded submissions gave it ({analysis.RARE_SHARE:.0%} of them, rounded down, "
        f"and never fewer than 2); a wrong answer is the catalogue's named mistake where the grader's reason "
        f"names one, else the grader's exact reason. Pairs that give the same unusual wrong answer on "
        f"{analysis.MIN_SHARED} questions or more are shown side by side. This is a hint, not a finding: read "
        f"the two notebooks (two blank answers can be unusual too).</p>"
    )
    if not summary.pairs:
        return intro + "<p>No pair of submissions shares unusual wrong answers on that many questions.</p>"
    parts = [intro]
    for pair in summary.pairs:
        first, second = by_submission[pair.first], by_submission[pair.second]
        rows = []
        for q in summary.questions:
            cells = []
            for row in (first, second):
                reason = row.get(f"{q.name} reason", "")
                cells.append(f"{row.get(q.name, 0):g}/{q.possible:g}" + (f": {_e(reason)}" if reason else ""))
            same = (
                f'<span class="flag">same unusual answer: {_e(pair.shared[q.name])}</span>'
                if q.name in pair.shared
                else ""
            )
            rows.append([_e(q.name), *cells, same])
        parts.append(
            _table(
                f"{pair.first} and {pair.second}: the same unusual wrong answer on "
                f"{len(pair.shared)} questions ({', '.join(pair.shared)})",
                ["Question", pair.first, pair.second, "Shared"],
                rows,
            )
        )
    return "".join(parts)


def _time(summary: analysis.Assignment) -> str:
    seconds = summary.seconds
    if not seconds:
        return "<p>No time was recorded.</p>"
    slowest = sorted(zip(summary.seconds, summary.submissions, strict=False), reverse=True)[:SLOWEST]
    listed = ", ".join(f"{_e(name)} ({s:.1f} s)" for s, name in slowest)
    return (
        f"<p>Grading took {sum(seconds):.0f} s of the grading threads' time over {len(seconds)} submissions "
        f"(several are graded at a time, so the batch took less): median {np.median(seconds):.1f} s, "
        f"longest {max(seconds):.1f} s. The slowest: {listed}.</p>"
    )


def _assignment(summary: analysis.Assignment, by_submission: dict[str, dict]) -> str:
    uri, alt = histogram(summary)
    totals = np.array(summary.totals)
    review = [q for q in summary.questions if q.review]
    flagged = (
        "<ul>" + "".join(f"<li>{_e(q.name)}: {_e('; '.join(q.review))}</li>" for q in review) + "</ul>"
        if review
        else "<p>No question is flagged.</p>"
    )
    unconfined = (
        f"<p>{len(summary.unconfined)} of them graded <strong>unconfined</strong> "
        f"(isolated: no): {_e(', '.join(summary.unconfined))}.</p>"
        if summary.unconfined
        else "<p>Every submission was graded confined (isolated: yes).</p>"
    )
    return (
        f'<section aria-labelledby="{_slug(summary.name)}"><h2 id="{_slug(summary.name)}">{_e(summary.name)}</h2>'
        f"<p>{_n(len(summary.submissions), 'graded submission')}, out of {summary.possible:g} points: mean "
        f"{totals.mean():.2f}, median {np.median(totals):g}.</p>{unconfined}"
        f'<figure><img src="{uri}" alt="{_e(alt)}" width="640" height="300">'
        f"<figcaption>The totals of {_e(summary.name)}: submissions per range of points.</figcaption></figure>"
        f"<h3>Questions</h3>{_questions(summary)}"
        f"<h3>Questions to review</h3>{flagged}"
        f"<h3>Mistakes most often made</h3>{_mistakes(summary)}"
        f"<h3>Pairs that share unusual wrong answers</h3>{_pairs(summary, by_submission)}"
        f"<h3>Time grading took</h3>{_time(summary)}</section>"
    )


DEFINITIONS = f"""<section aria-labelledby="definitions"><h2 id="definitions">What the numbers mean</h2><dl>
<dt>Facility</dt><dd>A question's mean score over its points possible, from 0 (no one scored) to 1 (everyone
scored full). Flagged below {analysis.MIN_FACILITY:g} (too hard, or graded wrongly) and above
{analysis.MAX_FACILITY:g} (it tells the class apart no more).</dd>
<dt>Discrimination</dt><dd>The correlation, over the graded submissions, of a question's score with the total of
the assignment's other questions (the corrected item–total correlation), from -1 to 1. A question that the
stronger submissions do better on than the weaker has a high one; flagged below {analysis.MIN_DISCRIMINATION:g}.
<em>Undefined</em> where every submission scored the same on the question, or on the rest of the
assignment, or fewer than three were graded.</dd>
<dt>Timed out, crashed, out of memory</dt><dd>The share of graded submissions whose answer to the question ran out
of time, whose process died, or that used more memory than allowed (as summary.csv counts them).</dd>
<dt>Named mistakes</dt><dd>A reason for lost points names a catalogued mistake of the question
(notebooks/wrong-answers/) when it contains that mistake's feedback words, which the question's public check says
when an answer behaves like it (else its mistake words); the answers no entry names are grouped together, with
their most frequent reasons.</dd></dl></section>"""


def render(summaries: list[analysis.Assignment], rows: list[dict], book: export.Gradebook, title: str) -> str:
    """The whole page, as HTML text."""
    by_submission = {row["submission"]: row for row in rows}
    ungraded = [row for row in rows if row.get("error")]
    nav = "".join(f'<li><a href="#{_slug(s.name)}">{_e(s.name)}</a></li>' for s in summaries)
    errors = (
        "<ul>" + "".join(f"<li>{_e(r['submission'])}: {_e(r['error'])}</li>" for r in ungraded) + "</ul>"
        if ungraded
        else "<p>Every submission was graded.</p>"
    )
    twice = "".join(
        f"<li>{_e(s)}, {_e(a)}: {_e(', '.join(subs))} (the higher total is exported)</li>"
        for (s, a), subs in book.repeated.items()
    )
    seconds = [row["seconds"] for row in rows if "seconds" in row]
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Grading report: {_e(title)}</title><style>{STYLE}</style></head><body><main>"
        f"<h1>Grading report: {_e(title)}</h1>"
        f"<p>{_n(len(rows), 'submission')} from {_n(len(book.totals), 'student')}, "
        f"{_n(len(summaries), 'assignment')}; grading took "
        f"{sum(seconds):.0f} s of the grading threads' time. Written {time.strftime('%Y-%m-%d %H:%M')}. "
        f"gradebook.csv beside this page holds each student's totals for Canvas or Moodle.</p>"
        f'<nav aria-label="Assignments"><ul>{nav}</ul></nav>'
        f"<h2>Not graded</h2>{errors}"
        + (f"<p>Handed in more than once:</p><ul>{twice}</ul>" if twice else "")
        + "".join(_assignment(s, by_submission) for s in summaries)
        + DEFINITIONS
        + "</main></body></html>"
    )


def write(scores: Path, autograders: Path = DIST / "autograder", wrong_answers: Path = WRONG_ANSWERS) -> Path:
    """``report.html`` and ``gradebook.csv`` beside a ``scores.csv``; returns the page's path.

    Parameters
    ----------
    scores : Path
        The ``scores.csv`` that ``make grade`` wrote (``FOLDER/scores.csv``).
    autograders : Path
        The autograder zips the grading used (each question's points).
    wrong_answers : Path
        The catalogue of named mistakes, one ``<assignment>.yml`` per assignment.
    """
    rows = analysis.read_scores(scores)
    summaries = [
        analysis.summarize(name, graded, points(name, autograders), catalogue(name, wrong_answers))
        for name, graded in analysis.graded_by_assignment(rows).items()
    ]
    book = export.gradebook(rows)
    export.write(book, scores.parent / "gradebook.csv")
    page = scores.parent / "report.html"
    page.write_text(render(summaries, rows, book, scores.parent.resolve().name), encoding="utf-8")
    log(f"report written to {page}, the gradebook to {scores.parent / 'gradebook.csv'}")
    return page


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit report FOLDER``: what ``make report`` runs."""
    parser = argparse.ArgumentParser(prog=prog, description="the instructor's report of a graded folder")
    parser.add_argument("submissions", type=Path, help="the folder make grade graded (its scores.csv)")
    parser.add_argument("--autograders", type=Path, default=DIST / "autograder")
    args = parser.parse_args(argv)
    write(args.submissions / "scores.csv", args.autograders)
