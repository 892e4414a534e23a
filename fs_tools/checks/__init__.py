"""What a change's new text is checked for before or after it lands: omission placeholders written over
real code (``placeholders``) and syntax errors it introduces (``syntax``), SPEC §15."""
