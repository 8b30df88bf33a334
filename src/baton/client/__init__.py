"""The client layer: `Client`, its multi round-trip driver, step mode, and typed questions."""

from ..forms import Accepted, Cancelled, Declined
from .core import Client, ClientError
from .questions import InvalidReply, Question, Reply
from .rounds import Round

__all__ = ["Accepted", "Cancelled", "Client", "ClientError", "Declined", "InvalidReply", "Question", "Reply", "Round"]
