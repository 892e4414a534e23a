"""How tools show things to a model: numbered lines, markers and snippets (``lines``), the paths, counts
and partial results of list, glob and grep (``listings``), and short quoting of arguments that never
raises, for presenters (``quoting``)."""
