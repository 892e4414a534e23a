"""Reading part of something large: the window of lines a read shows, kept in bounded memory while the
whole file is scanned (``window``), and a PDF's ``pages`` argument (``pdf_pages``)."""
