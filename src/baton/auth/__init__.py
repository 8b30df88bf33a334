"""OAuth 2.1 for a Baton server acting as a protected resource (MCP authorization, HTTP only).

- `resource.py`: `OAuthResource`, the configuration `Server(auth=...)` takes;
- `resource_uri.py`: canonical resource URIs and where their metadata lives (RFC 8707, RFC 9728);
- `bearer.py`: the request's bearer token; `claims.py`: scopes, audience and identity from claims;
- `jwt_verify.py` and `jwks.py`: JWT access tokens (PyJWT); `introspection.py`: opaque tokens (RFC 7662);
- `discovery.py`: an issuer's metadata (RFC 8414 / OpenID Connect Discovery).

The scope rules themselves (`@server.tool(scopes=...)`, the 401/403 challenges) live in the server
layer (`baton.server.scopes`, `baton.server.guard`); this package verifies tokens and publishes metadata.
"""

from ..server.exchange import Grant
from .discovery import DiscoveryError, discover_issuer
from .introspection import Introspection
from .resource import OAuthResource
from .resource_uri import canonical_resource

__all__ = ["DiscoveryError", "Grant", "Introspection", "OAuthResource", "canonical_resource", "discover_issuer"]
