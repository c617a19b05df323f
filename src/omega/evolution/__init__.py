"""Self-evolution: limitations, self-healing, introspection, proposals and the gate."""
