"""CLI and driver tests (a package, so that module names cannot clash with other test directories)."""
