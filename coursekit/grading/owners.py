"""Whose a submission is, which variant it is graded on, and whose variant it carries.

With a roster and the course secret (``make grade SUBMISSIONS=... ROSTER=... SECRET=...``), the
submissions folder holds one folder per student, named by the roster's id, as ``make assignments``
writes them (``SUBMISSIONS/<id>/NAME.ipynb``). Each notebook is graded on its **owner's** variant
(:func:`coursekit.variants.variant_seed`), whatever the notebook itself says. The notebook records
the tag of the variant it was made for (``metadata.coursekit.variant``,
:meth:`coursekit.grading.variant.Variants.tag`); where that is not its owner's, the row is flagged:
another student's variant (named), the public one, or none of the roster's.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import re
from pathlib import Path

from coursekit.grading.variant import PUBLIC, Variants
from coursekit.variants import Student, variant_seed

__all__ = ["Owners", "recorded_tag"]

_TAG = re.compile(r"[0-9a-f]{16}")


def recorded_tag(nb: dict) -> str:
    """The variant tag a submitted notebook records (``""`` if none, or not a tag)."""
    metadata = nb.get("metadata") if isinstance(nb, dict) else None
    course = metadata.get("coursekit") if isinstance(metadata, dict) else None
    tag = course.get("variant") if isinstance(course, dict) else None
    return tag if isinstance(tag, str) and _TAG.fullmatch(tag) else ""


class Owners:
    """The roster's students and their seeds, for one grading batch."""

    def __init__(self, students: list[Student], secret: bytes):
        self.ids = [s.id for s in students]
        self.secret = secret
        self._tags: dict[str, dict[str, list[str]]] = {}

    def owner(self, key: str) -> str | None:
        """The owner of the submission at ``key`` (its path under the submissions folder): its first folder."""
        parts = Path(key).parts
        return parts[0] if len(parts) > 1 and parts[0] in self.ids else None

    def seed(self, student: str, assignment: str) -> int:
        return variant_seed(self.secret, student, assignment)

    def flag(self, student: str, assignment: str, variants: Variants, tag: str) -> str:
        """What to say of a notebook of ``student`` that records ``tag`` (``""``: it is the student's own)."""
        if not variants or tag == variants.tag(self.seed(student, assignment)):
            return ""
        if assignment not in self._tags:  # every student's tag of this assignment, computed once per batch
            tags: dict[str, list[str]] = {}
            for other in self.ids:
                tags.setdefault(variants.tag(self.seed(other, assignment)), []).append(other)
            self._tags[assignment] = tags
        others = self._tags[assignment].get(tag)
        if others:  # two students may draw the same numbers: all who did are named
            named = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            return f"carries the variant of another student ({named}); graded on its owner's"
        if tag == variants.tag(PUBLIC):
            return "carries the public variant, not the student's own; graded on the student's"
        return "carries no variant of this roster's students; graded on the student's own"
