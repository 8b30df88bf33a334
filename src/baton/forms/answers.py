"""What an elicitation comes back as: `Accepted[T] | Declined | Cancelled`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Accepted(Generic[T]):
    """The user accepted; `data` holds the validated answer (None for URL mode, which carries no data)."""

    data: T

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Declined:
    """The user explicitly declined to answer."""

    def __bool__(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The user dismissed the question without choosing."""

    def __bool__(self) -> bool:
        return False


Answer = Accepted[T] | Declined | Cancelled
