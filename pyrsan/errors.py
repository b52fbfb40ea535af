"""The errors a user can cause, as one family of exceptions.

Each carries a one-line message and the exit code the CLI returns for it; ``details`` is
optional extra text (a compiler's diagnostics) printed after the message line. The CLI
catches :class:`PyrsanError` once; anything else is a bug in pyrsan.
"""

from __future__ import annotations

#: Exit codes (architecture.md, "Driver, output, exit codes").
EXIT_CLEAN = 0
EXIT_ERROR = 2
EXIT_PROGRAM_FAILED = 3
EXIT_REPORTS = 66


class PyrsanError(Exception):
    """A user-facing error: a one-line message and an exit code."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message


class UsageError(PyrsanError):
    """Bad command line: missing file, unknown extension, bad option value."""


class ToolchainError(PyrsanError):
    """No usable clang, or a clang pyrsan must not use."""


class BuildError(PyrsanError):
    """Compiling or linking the user's program (or the runtime) failed."""


class InstrumentationError(PyrsanError):
    """The instrumentation passes rejected the IR (unsupported construct)."""


class InternalError(PyrsanError):
    """A pyrsan component crashed: a bug in pyrsan, not in the user's program."""
