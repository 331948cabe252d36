"""Whose numbers a student gets: the roster, the course secret, and each student's variant of an assignment.

Every student gets their own variant of each assignment, drawn from a seed that only the course staff can
compute: a keyed hash (HMAC-SHA256) of the student's id and the assignment's name under the course secret.
Without the secret a student cannot work out a classmate's variant, and without a roster every notebook is
variant 0, the one the masters, the website and the public student repository show.

- The **roster** (:func:`read_roster`) is a CSV file with a column ``id`` (one row per student; other columns,
  such as ``name`` or ``email``, are kept but not used). An id names the student's folder of notebooks, so it
  is made of letters, digits, ``.``, ``_`` and ``-``, and ids are unique.
- The **secret** (:func:`read_secret`) is a file of at least :data:`MIN_SECRET_BYTES` random bytes that lives
  outside the repository (and so outside every student-facing file): ``python -m coursekit variants secret
  FILE`` makes one. The same secret must be used when the notebooks are made and when they are graded.
- The **seed** of a student's variant of an assignment (:func:`variant_seed`) is a positive 63-bit integer;
  0 is the public variant.

Derived for the course machinery; not part of the lecture.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.repository import ROOT, log

__all__ = ["PUBLIC", "Student", "read_roster", "read_secret", "variant_seed", "write_secret"]

PUBLIC = 0  # the variant without a roster: what the masters, the website and the student repository show
MIN_SECRET_BYTES = 32
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class RosterError(ValueError):
    """The roster cannot be read; the message names the row and what to change."""


@dataclass(frozen=True)
class Student:
    """One row of the roster: the student's id and the row's other columns."""

    id: str
    columns: dict[str, str] = field(default_factory=dict, compare=False)


def read_roster(path: Path) -> list[Student]:
    """The students of a roster CSV file, in its order.

    Raises
    ------
    RosterError
        No ``id`` column, an empty or malformed id, or an id twice; the message names the row.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows = [(reader.line_num, row) for row in reader]  # the line each row ends on (blank lines skipped)
            header = [name.strip() for name in reader.fieldnames or []]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise RosterError(f"cannot read the roster {path}: {error}") from None
    if not rows:
        raise RosterError(f"the roster {path} has no students: write a header line `id` and one id per line")
    if "id" not in header:
        columns = ", ".join(header)
        raise RosterError(f"the roster {path} has no column `id` (its columns: {columns}): name the ids' column `id`")
    students, seen = [], {}
    for line, row in rows:
        if None in row:  # csv.DictReader keeps the fields past the header's under None
            raise RosterError(
                f"{path}, line {line}: more fields than the header names; quote a field that holds a comma"
            )
        row = {key.strip(): (value or "").strip() for key, value in row.items()}
        student_id = row.pop("id")
        if not ID.fullmatch(student_id):
            raise RosterError(
                f"{path}, line {line}: the id {student_id!r} is not 1 to 64 letters, digits, '.', '_' or '-' "
                "(starting with a letter or digit); it names the student's folder, so change it to such an id"
            )
        if student_id in seen:
            raise RosterError(
                f"{path}, line {line}: the id {student_id!r} is on line {seen[student_id]} already; ids are unique"
            )
        seen[student_id] = line
        students.append(Student(student_id, row))
    return students


def variant_seed(secret: bytes, student_id: str, assignment: str) -> int:
    """The seed of ``student_id``'s variant of ``assignment``: a positive integer below 2**63 (never :data:`PUBLIC`).

    A keyed hash: the same for the same three inputs, and without ``secret`` no one can tell which.
    """
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"the course secret has {len(secret)} bytes; it needs at least {MIN_SECRET_BYTES}")
    message = f"{assignment}\x00{student_id}".encode()
    value = int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big") >> 1
    return value or 1


def read_secret(path: Path, repository: Path = ROOT) -> bytes:
    """The course secret from ``path``, refused if it lives in ``repository`` or is too short."""
    path = Path(path).expanduser().resolve()
    if path.is_relative_to(repository.resolve()):
        raise ValueError(
            f"the course secret {path} is inside the repository, where it could reach a student-facing file "
            "or a commit: keep it outside (e.g. ~/.config/course-secret) and point to it there"
        )
    try:
        secret = path.read_bytes()
    except OSError as error:
        raise ValueError(
            f"cannot read the course secret {path}: {error}; make one with `python -m coursekit variants secret FILE`"
        ) from None
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(
            f"the course secret {path} has {len(secret)} bytes, fewer than {MIN_SECRET_BYTES}: make a new one with "
            "`python -m coursekit variants secret FILE`"
        )
    return secret


def write_secret(path: Path, repository: Path = ROOT) -> Path:
    """Write a new random secret to ``path`` (readable by its owner only); refuse to overwrite one."""
    path = Path(path).expanduser().resolve()
    if path.is_relative_to(repository.resolve()):
        raise ValueError(f"{path} is inside the repository: keep the course secret outside it")
    if path.exists():
        raise ValueError(
            f"{path} exists: a new secret would change every student's numbers; remove it first if you mean that"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(secrets.token_bytes(MIN_SECRET_BYTES))
    return path


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit variants secret FILE`` and ``... seeds ROSTER ASSIGNMENT --secret FILE``."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("secret", help="write a new course secret to FILE (outside the repository)")
    make.add_argument("file", type=Path)
    seeds = commands.add_parser("seeds", help="each student's seed of an assignment, as CSV")
    seeds.add_argument("roster", type=Path)
    seeds.add_argument("assignment")
    seeds.add_argument("--secret", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "secret":
            log(f"course secret written to {write_secret(args.file)}: keep it, and keep it private")
            return
        secret = read_secret(args.secret)
        print("id,seed")
        for student in read_roster(args.roster):
            print(f"{student.id},{variant_seed(secret, student.id, args.assignment)}")
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None
