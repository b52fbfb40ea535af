import pytest

from harness import Runtime, load_engine


@pytest.fixture(scope="session")
def engine():
    return load_engine()


@pytest.fixture
def rt(engine, tmp_path):
    ffi, lib = engine
    r = Runtime(ffi, lib, tmp_path)
    r.reset()
    yield r
    lib.__rsan_test_reset()
