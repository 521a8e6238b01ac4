"""``python -m symshape``: the same command line as the ``symshape`` script."""

import sys

from symshape.cli import main

if __name__ == "__main__":
    sys.exit(main())
