"""Harness-side gate engine: observation ledger and pure decisions over write and edit intents.

No file I/O happens here; ``fs_tools`` calls into this package, never the other way round, so a
decision names the rule that refuses (``Refusal``) and fs-tools turns it into its error.
"""

from policy.gates import Allow, Decision, Deny, Intent, ProtectedPaths, Refusal, decide, decide_mutation_allowed
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
    "Decision",
    "Deny",
    "Intent",
    "MemoryStore",
    "Observation",
    "ObservationStore",
    "Present",
    "ProtectedPaths",
    "Refusal",
    "decide",
    "decide_mutation_allowed",
]
