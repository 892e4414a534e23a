"""Patterns the discovery tools take and keep: globs (``glob``), .gitignore rules (``ignore``), and the
quick byte-level look that rules a file out of a regex search before it is decoded (``prefilter``)."""
