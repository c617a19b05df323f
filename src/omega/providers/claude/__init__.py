"""Claude Code through the real `claude` CLI: the provider (code), the CLI's flags, login and
tool modes (cli), its private home per call (home), the MCP bridge to Omega's tools (mcp) and
the stream-json reader (stream)."""
