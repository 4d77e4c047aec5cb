"""API keys, which every server checks: the keys file of their digests (keys_file.py), its changes
(edits.py), when keys end (expiry.py) and its secret (secret.py), a key's strength (strength.py), and what
a key may see — its grant set, the audience a release serves it, whether it may preview (audiences.py).
nginx's key map is serve/nginx/key_map.py; the edges' key entries serve/deploy/edge_release.py."""
from ...contract.key_format import new_key
from .audiences import (
    grant_set_audiences,
    missing_variant,
    previewers,
    release_audience,
    served_audiences,
    user_grants,
)
from .edits import add_key, revoke, rotate, set_expiry, site_secret
from .expiry import duration_ms, ending_soon, instant_ms
from .keys_file import (
    HEADER,
    HEADER_LINE,
    PREVIEW_GRANT,
    USER,
    USER_RULE,
    ApiKey,
    IssuedKey,
    KeysFile,
    key_line,
    keys_lock,
    load_keys,
    migrate,
    problems_warning,
    read_keys,
    summarised,
    write_keys,
    write_lines,
)
from .secret import read_secret, secret_path
from .strength import KEY, MIN_KEY_BITS, key_bits, key_weakness, normalise_key

__all__ = ["ApiKey", "HEADER", "HEADER_LINE", "IssuedKey", "KEY", "KeysFile", "MIN_KEY_BITS", "PREVIEW_GRANT",
           "USER", "USER_RULE", "add_key", "duration_ms", "ending_soon", "grant_set_audiences", "instant_ms",
           "key_bits", "key_line", "key_weakness", "keys_lock", "load_keys", "migrate", "missing_variant", "new_key",
           "normalise_key", "previewers", "problems_warning", "read_keys", "read_secret", "release_audience",
           "revoke", "rotate", "secret_path", "served_audiences", "set_expiry", "site_secret", "summarised",
           "user_grants", "write_keys", "write_lines"]
