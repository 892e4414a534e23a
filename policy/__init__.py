"""Harness-side gate engine: observation ledger and pure decisions over write and edit intents.

No file I/O happens here; ``fs_tools`` calls into this package, never the other way round.
"""

from policy.gates import Allow, Deny, Intent, ProtectedPaths, decide, decide_mutation_allowed
from policy.observations import (
    ABSENT,
    Absent,
    MemoryStore,
    Observation,
    ObservationStore,
    Present,
)

__all__ = [
    "ABSENT",
    "Absent",
    "Allow",
    "Deny",
    "Intent",
    "MemoryStore",
    "Observation",
    "ObservationStore",
    "Present",
    "ProtectedPaths",
    "decide",
    "decide_mutation_allowed",
]
