"""Authentication helpers."""

import hmac


class AuthService:
    """Validates bearer tokens against a shared secret."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    def validate_token(self, token: str) -> bool:
        """Return True when the token matches the secret."""
        return hmac.compare_digest(token, self.secret)


def login(service: AuthService, token: str) -> str:
    """Log a user in with a token."""
    if not service.validate_token(token):
        raise PermissionError("bad token")
    return "ok"
