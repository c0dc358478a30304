"""`entropic-bound heads` as the command line sees it: listed in --help, its usage errors one
line and exit 2 before anything is read (the captures themselves: tests/pretrained/
test_heads_command.py)."""

import subprocess
import sys

import pytest

from entropic_bound.cli.capture import CORPUS_NAMES
from entropic_bound.cli.main import main


def test_help_lists_the_command_and_its_options(capsys):
    assert main(["--help"]) == 0
    assert "heads" in capsys.readouterr().out
    assert main(["heads", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--text", "--corpus", "--window", "--windows", "--layers", "--batch", "--out"):
        assert option in out


def test_the_corpus_names_are_the_libraries():
    from entropic_bound.pretrained.corpus import CORPORA

    assert CORPUS_NAMES == tuple(CORPORA)


def test_help_imports_no_torch():
    code = (
        "import sys; from entropic_bound.cli.main import build_parser; build_parser(); "
        "assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["heads", "m", "--window", "8", "--out", "o"], "one of the arguments --text --corpus"),
        (["heads", "m", "--text", "a", "--corpus", "common-licenses"], "not allowed with"),
        (["heads", "m", "--text", "a", "--window", "x", "--out", "o"], "invalid int value"),
        (["heads", "m", "--corpus", "wiki", "--window", "8", "--out", "o"], "invalid choice"),
        (["heads", "m", "--text", "a", "--out", "o"], "--window"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv, says):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and says in err, err
