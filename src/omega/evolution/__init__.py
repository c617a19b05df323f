"""Self-evolution: gaps, proposals, the gate, reflection and self-healing.

The package's public face is the list of sub-packages below (`__all__`); each has a face of its
own (its `__init__` names what callers outside it use, loaded on first use), and callers outside
a sub-package import from that face, never from one of its modules. Lowest first (each imports
only the ones before it; tests/unit/test_layers.py keeps the order):
- meaning: whether two short texts say the same thing (limitations and proposals agree)
- heal: the self-healing lifecycle the gateway runs
- proposals: procedural memory, review, registration, fragments, the tool scaffold and the
  validation loop
- gate: the checks in code and the model judge every proposal passes
- gaps: limitations, the owner's digest, and the one way a gap becomes a proposal
- reflection: introspection, the critic, skill lessons and the owner's report
"""

__all__ = ["gaps", "gate", "heal", "meaning", "proposals", "reflection"]
