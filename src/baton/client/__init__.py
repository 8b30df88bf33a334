"""The client layer: `Client`, its multi round-trip driver, step mode, and typed questions."""

from ..forms import Accepted, Answer, Cancelled, Declined
from .core import Client
from .errors import ClientError, InvalidReply, MalformedQuestion
from .questions import Question
from .rounds import Round

__all__ = [
    "Accepted",
    "Answer",
    "Cancelled",
    "Client",
    "ClientError",
    "Declined",
    "InvalidReply",
    "MalformedQuestion",
    "Question",
    "Round",
]
