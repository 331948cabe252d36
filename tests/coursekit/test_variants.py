"""Each student's variant seed, the roster and the course secret (coursekit.variants)."""

from __future__ import annotations

import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from coursekit import variants

SECRET = bytes(range(32))
IDS = st.from_regex(variants.ID, fullmatch=True)


@given(IDS, IDS, st.text(min_size=1, max_size=40))
def test_a_seed_is_a_keyed_hash_of_student_and_assignment(first, second, assignment):
    seed = variants.variant_seed(SECRET, first, assignment)
    assert 0 < seed < 2**63 and seed != variants.PUBLIC
    assert seed == variants.variant_seed(SECRET, first, assignment)
    if first != second:
        assert seed != variants.variant_seed(SECRET, second, assignment)
    assert seed != variants.variant_seed(bytes(reversed(SECRET)), first, assignment)
    assert seed != variants.variant_seed(SECRET, first, assignment + "x")


def test_ids_and_assignments_cannot_be_shifted_into_each_other():
    assert variants.variant_seed(SECRET, "b", "a") != variants.variant_seed(SECRET, "", "ab")
    with pytest.raises(ValueError, match="at least 32"):
        variants.variant_seed(b"short", "s1", "01.01")


def test_a_roster_keeps_its_order_and_columns(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("\ufeffname,id,email\nAda,s-001,ada@example.edu\nBo, s.002 ,\n", encoding="utf-8")
    students = variants.read_roster(roster)
    assert [s.id for s in students] == ["s-001", "s.002"]
    assert students[0].columns == {"name": "Ada", "email": "ada@example.edu"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no students"),
        ("name\nAda\n", "no column `id`"),
        ("id\ns1\n../s2\n", "line 3: the id '../s2'"),
        ("id\n\n", "no students"),
        ("id\ns1\n,\n", "line 3: more fields than the header"),
        ("id,name\ns1,A\n,B\n", "line 3: the id ''"),
        ("id\ns1\ns2\ns1\n", "line 4: the id 's1' is on line 2 already"),
        ("id\ns1\n\n\ns1\n", "line 5: the id 's1' is on line 2 already"),
        ("id\ns1,extra\n", "line 2: more fields than the header"),
    ],
)
def test_a_bad_roster_is_refused_with_the_row_and_the_fix(tmp_path, text, message):
    roster = tmp_path / "roster.csv"
    roster.write_text(text)
    with pytest.raises(variants.RosterError, match=message.replace("(", r"\(").replace(".", r"\.")):
        variants.read_roster(roster)


def test_the_secret_lives_outside_the_repository_and_is_never_overwritten(tmp_path):
    path = variants.write_secret(tmp_path / "config" / "secret")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(variants.read_secret(path)) == variants.MIN_SECRET_BYTES
    with pytest.raises(ValueError, match="exists"):
        variants.write_secret(path)
    with pytest.raises(ValueError, match="inside the repository"):
        variants.write_secret(ROOT / "secret")
    with pytest.raises(ValueError, match="inside the repository"):
        variants.read_secret(ROOT / "README.md")
    (tmp_path / "short").write_bytes(b"x" * 8)
    with pytest.raises(ValueError, match="fewer than 32"):
        variants.read_secret(tmp_path / "short")


def test_the_command_line_prints_each_students_seed(tmp_path, capsys):
    secret = variants.write_secret(tmp_path / "secret")
    (tmp_path / "roster.csv").write_text("id\ns1\ns2\n")
    variants.main(["seeds", str(tmp_path / "roster.csv"), "01.01", "--secret", str(secret)])
    lines = capsys.readouterr().out.split()
    assert lines[0] == "id,seed" and [line.split(",")[0] for line in lines[1:]] == ["s1", "s2"]
    assert int(lines[1].split(",")[1]) == variants.variant_seed(secret.read_bytes(), "s1", "01.01")
    with pytest.raises(SystemExit, match="inside the repository"):
        variants.main(["seeds", str(tmp_path / "roster.csv"), "01.01", "--secret", str(ROOT / "README.md")])
