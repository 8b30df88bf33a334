"""Sealed `requestState`: the key ring, sealing and opening, and the journal of a flow."""

from .journal import Journal
from .keys import Key, KeyRing, KeyRingError, data_dir
from .seal import InvalidState, Sealer, StateTooLarge

__all__ = ["InvalidState", "Journal", "Key", "KeyRing", "KeyRingError", "Sealer", "StateTooLarge", "data_dir"]
