"""pyrsan: a robustness sanitizer for C11/C++11 programs (RSAN location clocks, PLDI'25)."""

import os as _os

__version__ = "0.1.0"

# `pyrsan.passes` is the top-level passes/ directory, mapped by the installer (pyproject's
# package-dir). Running straight from a checkout without installing, let the parent
# directory serve as a second search path so that `pyrsan.passes` still resolves there.
_here = _os.path.dirname(_os.path.abspath(__file__))
_parent = _os.path.dirname(_here)
if not _os.path.isdir(_os.path.join(_here, "passes")) and _os.path.isfile(
    _os.path.join(_parent, "passes", "__init__.py")
):
    __path__.append(_parent)  # noqa: F821
