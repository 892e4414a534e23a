"""Finding text: literal, byte-preserving replacement for the edit tools (``replace``), why an
``old_string`` was not found (``diagnosis``, SPEC §15), and the closest existing paths for one that does
not exist (``paths``)."""
