"""`tilecc nki-shim -- COMMAND` leaves nothing behind: the folder holding its sitecustomize.py
exists while COMMAND runs (COMMAND sees it first on PYTHONPATH) and is gone afterwards, whether
COMMAND succeeds, fails, or cannot be started."""

from __future__ import annotations

import tempfile

import pytest

from tilecc.cli import main

# a shell command (no Python start-up): the first PYTHONPATH entry and what it holds
_PRINT_FOLDER = 'folder="${{PYTHONPATH%%:*}}"; echo "$folder"; ls "$folder"; exit {code}'


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("code", [0, 3])
def test_the_shim_folder_exists_while_the_command_runs_and_is_removed_after(private_tmp, capfd, code):
    assert main(["nki-shim", "--", "sh", "-c", _PRINT_FOLDER.format(code=code)]) == code
    folder, listing = capfd.readouterr().out.splitlines()
    assert folder.startswith(str(private_tmp / "tilecc-nki-shim-"))
    assert listing == "sitecustomize.py"
    assert list(private_tmp.iterdir()) == []


def test_a_command_that_cannot_start_leaves_no_folder(private_tmp, capsys):
    assert main(["nki-shim", "--", str(private_tmp / "no-such-program")]) == 1
    assert "cannot run" in capsys.readouterr().err
    assert list(private_tmp.iterdir()) == []
