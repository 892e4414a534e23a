"""fs-tools over MCP, split by concern: ``server`` (the tools on the SDK's low-level server, sessions,
the audit log), ``wire`` (lenient JSON-RPC over lines), ``stdio``, ``http`` (bearer token, idle
sessions, listening) with ``replicas`` (several HTTP servers sharing a store), and ``shapes`` (the JSON
a client gets, which the CLI prints without the SDK).

Only ``shapes`` works without the ``mcp`` extra; nothing is imported with this package."""
