"""The syntax of ``PYRSAN_OPTIONS`` (docs/interfaces.md §2), as the runtime reads it
(runtime/src/flags.c ``parse_options``; testsuite/realcode/test_options_quoting.py checks
that both sides agree):

- items are ``name=value``, separated by ``:`` or white space (space, tab, CR, LF);
- a value is either *bare*: every character up to the next separator, taken literally
  (it may contain ``=``), or *quoted*: it starts with ``"`` and ends at the next ``"`` not
  escaped by a backslash; inside, ``\\x`` stands for ``x`` (so ``\\"`` and ``\\\\``) and every
  other character, ``:``, white space and ``=`` included, is itself. A quoted value must be
  followed by a separator or the end.

The driver quotes any value that needs it (:func:`quote_value`), so that every path valid for
the OS (spaces, ``:``, ``=``, quotes) works in ``json_path``, ``suppressions``, ``schedule``,
``trace_path`` and ``log_path``.
"""
from __future__ import annotations

SEPARATORS = ": \t\r\n"


class OptionSyntaxError(ValueError):
    """A malformed PYRSAN_OPTIONS string; str() is one line."""


def quote_value(value: str) -> str:
    """``value`` as it must be written in PYRSAN_OPTIONS (bare when it can be)."""
    if value and not any(c in value for c in SEPARATORS + '"\\'):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_options(items) -> str:
    """``name=value`` items (pairs or a mapping) joined by ``:``, values quoted as needed."""
    pairs = items.items() if hasattr(items, "items") else items
    return ":".join(f"{name}={quote_value(str(value))}" for name, value in pairs)


def parse_options(text: str) -> list[tuple[str, str | None]]:
    """The items of ``text`` in order; value None for an item without ``=``.
    Raises OptionSyntaxError for an unterminated quoted value or text right after one."""
    items: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in SEPARATORS:
            i += 1
        if i >= n:
            return items
        start = i
        while i < n and text[i] != "=" and text[i] not in SEPARATORS:
            i += 1
        name = text[start:i]
        if i >= n or text[i] != "=":
            items.append((name, None))
            continue
        i += 1
        if i < n and text[i] == '"':
            i += 1
            out = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                out.append(text[i])
                i += 1
            if i >= n:
                raise OptionSyntaxError(f"option '{name}' in PYRSAN_OPTIONS has an unterminated quoted value")
            i += 1
            if i < n and text[i] not in SEPARATORS:
                raise OptionSyntaxError(f"option '{name}' in PYRSAN_OPTIONS has text right after its quoted value")
            items.append((name, "".join(out)))
        else:
            start = i
            while i < n and text[i] not in SEPARATORS:
                i += 1
            items.append((name, text[start:i]))
