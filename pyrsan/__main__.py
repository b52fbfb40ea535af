"""`python -m pyrsan`: the same as the `pyrsan` console script."""

from .cli import main

if __name__ == "__main__":
    main()
