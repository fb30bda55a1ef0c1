"""What known language servers leave out of an answer without saying so, by the name a server gives itself (its
`serverInfo.name`, or the client's name for it)."""

from __future__ import annotations

import re
from typing import Optional

REFERENCE_FILES = {"jedi": 30}
"""The most files holding a name that a server reads in one reference search: jedi parses at most 30
(`_PARSED_FILE_LIMIT` in jedi/inference/references.py), so jedi-language-server's references stop there."""


def reference_files_limit(server: Optional[str]) -> Optional[int]:
    """The most files holding a name the server named `server` reads for one reference search (None: no limit
    known). `jedi-language-server`, `jedi_language_server` (nvim-lspconfig's name) and `jedi` are one server."""
    if not server:
        return None
    words = set(re.split(r"[^a-z0-9]+", server.lower()))
    return next((limit for name, limit in REFERENCE_FILES.items() if name in words), None)
