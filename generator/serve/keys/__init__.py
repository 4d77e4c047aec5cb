"""API keys, which every server checks: the keys file of their digests (keys_file.py), its changes
(edits.py) and its secret (secret.py), a key's strength (strength.py), and what a key may see — its grant
set, the audience a release serves it, whether it may preview (audiences.py). nginx's key map is
serve/nginx/key_map.py; the edges' key entries serve/deploy/edge_release.py."""
from ...contract.key_format import new_key
from .audiences import (
    grant_set_audiences,
    missing_variant,
    previewers,
    release_audience,
    served_audiences,
    user_grants,
)
from .edits import add_key, revoke, site_secret
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

__all__ = ["grant_set_audiences", "missing_variant", "previewers", "release_audience", "served_audiences",
           "user_grants", "HEADER", "HEADER_LINE", "PREVIEW_GRANT", "USER", "USER_RULE", "ApiKey", "IssuedKey",
           "KeysFile", "add_key", "key_line", "keys_lock", "load_keys", "migrate", "problems_warning", "read_secret",
           "secret_path", "site_secret", "read_keys", "revoke", "summarised",
           "write_keys", "write_lines", "KEY", "MIN_KEY_BITS", "key_bits", "key_weakness", "new_key", "normalise_key"]
