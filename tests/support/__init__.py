"""What the tests share: real services they start (a Redis server, scripted model APIs on loopback,
an HTTP server in process), files they make (PDFs), the docs' browser check, and the helpers and tables
more than one test file uses. Test files import from here, never from one another."""
