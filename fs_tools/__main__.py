"""``python -m fs_tools``: the ``fs-tools`` command. A hook run (what a harness runs around each tool call)
asks the hook server first, before the command's own modules are imported (``fs_tools.hooks.relay``)."""

import sys


def _main() -> int:
    words = sys.argv[1:]
    if words[:1] == ["hook"] and not {"install", "uninstall", "-h", "--help"} & set(words):
        from fs_tools.hooks.relay import answer

        try:
            status = answer(words)
        except Exception:  # the command answers the event itself
            status = None
        if status is not None:
            return status
    from fs_tools.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(_main())
