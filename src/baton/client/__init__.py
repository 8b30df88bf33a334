"""The client layer: `Client`, its multi round-trip driver, step mode, and typed questions."""

from ..forms import Accepted, Cancelled, Declined
from .core import Client
from .errors import ClientError, InvalidReply, MalformedQuestion
from .questions import Question, Reply
from .rounds import Round

__all__ = [
    "Accepted",
    "Cancelled",
    "Client",
    "ClientError",
    "Declined",
    "InvalidReply",
    "MalformedQuestion",
    "Question",
    "Reply",
    "Round",
]
