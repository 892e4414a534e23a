"""``python -m fs_tools``: the ``fs-tools`` command."""

import sys

from fs_tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
