"""pyrsan: a robustness sanitizer for C11/C++11 programs (RSAN location clocks, PLDI'25).

`pyrsan.passes` is the top-level passes/ folder and `pyrsan._runtime` the runtime/ folder,
mapped by the packaging configuration (pyproject.toml package-dir): install the checkout
(`pip install -e .`, scripts/setup.sh) to run it.
"""

__version__ = "0.1.0"
