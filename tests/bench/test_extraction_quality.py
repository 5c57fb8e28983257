"""bench/extraction_quality.py's command line: the labelled files it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import extraction_quality


def test_a_labelled_file_is_found_by_the_name_the_help_gives(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert extraction_quality.main(["--data", extraction_quality.HELDOUT.name]) == 0
    assert capsys.readouterr().out.startswith("77 sentences: ")


def test_an_unknown_labelled_file_is_named_with_the_files_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        extraction_quality.main(["--data", str(tmp_path / "nope.tsv")])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "no labelled file" in error and "nope.tsv" in error
    assert "extraction_heldout.tsv" in error
