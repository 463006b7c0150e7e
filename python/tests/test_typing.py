"""The public API's type hints, checked by mypy (in requirements-dev.txt and -test.txt).

typing_usage.py assigns typical calls to the types their hints promise; every module of the
package is checked with it, strictly (the internal helpers too: a wrong hint there misleads the
next reader as surely as a public one).
"""

import os

import mypy.api  # no skip: the suite runs where requirements-test.txt was installed

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "epsjoin")
MODULES = sorted(name for name in os.listdir(PACKAGE) if name.endswith(".py"))


def test_the_public_hints_hold_under_mypy_strict(tmp_path):
    # The package's sources, not an installed copy: files named on the command line come first
    # on mypy's search path, and its _epsjoin.pyi types the extension without building it.
    files = [os.path.join(HERE, "typing_usage.py")]
    assert "_join.py" in MODULES and "_device.py" in MODULES
    files += [os.path.join(PACKAGE, name) for name in MODULES]
    # CuPy and torch as empty typed modules, ahead of any installed copy: the result must not
    # depend on whether they (and their hints) are installed where this runs. (torch's own hints
    # once failed this test on the GPU machine only.)
    stubs = tmp_path / "stubs"
    for module in ("torch", "cupy", "cupyx", "cupyx/scipy", "cupyx/scipy/sparse"):
        (stubs / module).mkdir(parents=True)
        (stubs / module / "__init__.pyi").write_text("")
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {stubs}\n")
    stdout, stderr, status = mypy.api.run(
        ["--config-file", str(config), "--strict", "--follow-imports=silent",
         "--ignore-missing-imports", "--cache-dir", str(tmp_path / "mypy-cache"),
         "--no-error-summary", *files])
    assert status == 0, stdout + stderr
