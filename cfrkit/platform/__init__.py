"""The match platform: a server agents and people join (JSON lines, ACPC, browser), a client library,
SQLite storage and results.  See docs/platform.md."""
from cfrkit.platform.client import AgentClient, Client, ClientResult, PlatformClientError, run_clients

__all__ = ["AgentClient", "Client", "ClientResult", "PlatformClientError", "run_clients"]
