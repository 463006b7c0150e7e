"""The public API's type hints, checked by mypy (python/requirements-dev.txt has it).

typing_usage.py assigns typical calls to the types their hints promise; the modules the public
API is written in are checked with it, strictly. The helpers behind them (_validation, _device,
_metrics) are read for their types only (--follow-imports=silent): their hints are internal.
"""

import os

import mypy.api  # no skip: the suite runs where requirements-dev.txt was installed

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "epsjoin")
PUBLIC_MODULES = ["__init__.py", "_join.py", "_radii.py", "_sklearn.py", "_index.py",
                  "_dbscan.py"]


def test_the_public_hints_hold_under_mypy_strict(tmp_path):
    # The package's sources, not an installed copy: files named on the command line come first
    # on mypy's search path, and its _epsjoin.pyi types the extension without building it.
    files = [os.path.join(HERE, "typing_usage.py")]
    files += [os.path.join(PACKAGE, name) for name in PUBLIC_MODULES]
    stdout, stderr, status = mypy.api.run(
        ["--strict", "--follow-imports=silent", "--ignore-missing-imports",
         "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary", *files])
    assert status == 0, stdout + stderr
