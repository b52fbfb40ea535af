"""Fixtures of the reference-model tests: the engine-only runtime, built once per session."""
import pytest


@pytest.fixture(scope="session")
def engine(tmp_path_factory):
    from explore import Engine

    return Engine(tmp_path_factory.mktemp("rsan-diff"))
