"""fs-tools benchmarks: every figure is a ratio measured in the same run (see ``python -m bench --help``)."""
