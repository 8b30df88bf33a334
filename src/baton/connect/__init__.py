"""The connect kit (protocol.md P22): URL mode for secrets, on the server's own pages, never via the client."""

from .cookie import Session, Sessions
from .kit import ConnectKit, NotConnected, mount_default_kit
from .oauth import OAuthProvider
from .page_login import DevLogin, Login
from .stores import StoreUnavailable
from .tickets import MemoryTickets, SqliteTickets, Ticket, TicketStore
from .vault import CredentialHandle, MemoryVaultStore, SqliteVaultStore, Vault, VaultError, VaultStore

__all__ = [
    "ConnectKit",
    "CredentialHandle",
    "DevLogin",
    "Login",
    "MemoryTickets",
    "MemoryVaultStore",
    "NotConnected",
    "OAuthProvider",
    "Session",
    "Sessions",
    "SqliteTickets",
    "SqliteVaultStore",
    "StoreUnavailable",
    "Ticket",
    "TicketStore",
    "Vault",
    "VaultError",
    "VaultStore",
    "mount_default_kit",
]
