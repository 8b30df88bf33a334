"""Sealed `requestState`: the key ring, sealing and opening, and the journal of a flow."""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .journal import Journal
    from .keys import Key, KeyRing, KeyRingError, data_dir
    from .seal import InvalidState, Sealer, StateTooLarge

# Imported on first use (baton.lazy_exports): the many modules that need only `state.clock` do not load the
# ciphers, nor does the command line's parser.
_WHERE = {
    "Journal": ".journal",
    "Key": ".keys",
    "KeyRing": ".keys",
    "KeyRingError": ".keys",
    "data_dir": ".keys",
    "InvalidState": ".seal",
    "Sealer": ".seal",
    "StateTooLarge": ".seal",
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

__all__ = ["InvalidState", "Journal", "Key", "KeyRing", "KeyRingError", "Sealer", "StateTooLarge", "data_dir"]
