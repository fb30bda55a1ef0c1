"""A misbehaving language server over stdio, in plain LSP framing (no pygls, so that it can break the protocol at
will): the sidecar's fault cases.

`python -m tests.fakes.lsp_raw MODE DIR`: appends "start <pid>" to DIR/log when it starts, then one line per
request it is sent ("<method> <id>"), per `$/cancelRequest` ("cancel <id>") and for `initialized` ("initialized"). It speaks UTF-16 positions and
offers definition, hover, references and document symbols; what it does with a request depends on MODE:
  ok        answers: a definition at 0:0 of the same file, hover "fine", no references
  no-init   never answers `initialize`
  late-init answers `initialize` once it is sent SIGUSR1 (the "start <pid>" line names whom to send it), then as ok
  hang      never answers definition, hover or references
  die-once  exits (code 3) in the middle of the first definition of all its runs (DIR/died marks it), then answers
  die       exits (code 3) in the middle of every definition, saying "dying on purpose" on stderr
  garbage   answers the variant GARBAGE[line % len] (line of the request's position): wrong shapes, huge
            results, positions out of range, lone surrogates
  junk      writes the variant JUNK[line % len] to stdout instead of the answer (bad framing, bad JSON)
  symbols   answers documentSymbol from the Python text it was synced (didOpen/didChange, else the disk): functions
            and classes with their methods, each starting at `def`/`class` as jedi does; references by whole word
            over those texts and the workspace's *.py; its work-done progress begun and ended at `initialized`
            (`index: ready`), begun only when DIR/loading exists; a request whose method DIR/hold names is never
            answered (the test kills it then)
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any, Optional

UTF8 = "utf-8"
FAR = {"line": 10 ** 9, "character": 10 ** 9}


def _location(uri: Any, start: Any = None, end: Any = None) -> dict:
    start = start or {"line": 0, "character": 0}
    return {"uri": uri, "range": {"start": start, "end": end or start}}


def garbage(uri: str) -> list[Any]:
    """What a broken server may answer to definition, hover or references."""
    return [
        "a string", 42, True, [1, 2, 3], {"unexpected": "shape"}, [None, "x", {}],
        _location(None), _location(uri, {"line": -1, "character": -5}), _location(uri, FAR, FAR),
        _location(uri, {"line": "zero", "character": []}), [_location("not a uri")],
        [_location("file:///elsewhere/\ud800.py")], {"contents": "lone \udc00 surrogate"},
        [_location("file:///a%00b.py")], [_location(uri, {"line": 1.5, "character": None})],
        {"contents": {"kind": "markdown", "value": 7}}, {"contents": [{"language": None}, 3]},
        [_location(uri, {"line": 0, "character": n % 40}) for n in range(100_000)],  # a huge result
        {"contents": "x" * 5_000_000}, [[[[[[[[[[[]]]]]]]]]]],
        {"uri": uri, "range": None}, [{"targetUri": uri, "targetRange": "nowhere"}],
    ]


def junk() -> list[bytes]:
    """What a broken server may write to stdout instead of an answer."""
    body = b'{"jsonrpc": "2.0", "id": 1, "result": null}'
    return [
        b"hello, I am printing to stdout\r\n",
        b"Content-Length: 5\r\n\r\n{not json",
        b"Content-Length: 2\r\n\r\n[]",
        b"Content-Type: text/plain\r\n\r\n" + body,
        b"Content-Length: -4\r\n\r\n" + body,
        b"Content-Length: abc\r\n\r\n" + body,
        b"Content-Length: 3\r\n\r\n\xff\xfe\xfd",
        b"\x00\x01\x02" * 100,
    ]


class Server:
    def __init__(self, mode: str, out: Path) -> None:
        self.mode, self.out = mode, out
        self.stdin, self.stdout = sys.stdin.buffer, sys.stdout.buffer
        self.told = False  # late-init: SIGUSR1 came
        self.initialize: Any = None  # late-init: the id of the `initialize` not answered yet
        self.texts: dict[str, str] = {}  # symbols: uri -> the text it was synced
        self.root: Optional[Path] = None

    def log(self, line: str) -> None:
        with open(self.out / "log", "a", encoding=UTF8) as f:
            f.write(line + "\n")

    def read(self) -> Optional[dict]:
        length = None
        while True:
            line = self.stdin.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return json.loads(self.stdin.read(length or 0))

    def write(self, message: Any) -> None:
        body = json.dumps(message).encode(UTF8)  # ensure_ascii: a lone surrogate goes out as \\udXXX
        self.stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdout.flush()

    def answer(self, msg_id: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def serve(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        if self.mode == "late-init":
            signal.signal(signal.SIGUSR1, self.go)
        self.log(f"start {os.getpid()}")
        while (message := self.read()) is not None:
            method, msg_id, params = message.get("method"), message.get("id"), message.get("params") or {}
            if method == "$/cancelRequest":
                self.log(f"cancel {params.get('id')}")
                continue
            if method is None or msg_id is None:
                if method == "exit":
                    return
                if method == "initialized":
                    self.log("initialized")
                    if self.mode == "symbols":
                        self.progress()
                if method in ("textDocument/didOpen", "textDocument/didChange"):
                    self.synced(params)
                continue  # notifications, answers
            # SIGUSR1 waits while a request is handled: `go` never sees one half done, nor writes amid an answer
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
            try:
                self.log(f"{method} {msg_id}")
                self.handle(method, msg_id, params)
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})

    def go(self, signum: int, frame: Any) -> None:
        """SIGUSR1 (late-init): answer `initialize`, now if it came, else as soon as it comes. `serve` lets it run
        only between requests, while reading stdin, never amid a write."""
        self.told = True
        if self.initialize is not None:
            self.initialized(self.initialize)

    def initialized(self, msg_id: Any) -> None:
        self.initialize = None
        self.answer(msg_id, {"capabilities": {
            "positionEncoding": "utf-16", "definitionProvider": True, "hoverProvider": True,
            "referencesProvider": True, "documentSymbolProvider": True, "textDocumentSync": 1}})

    def handle(self, method: str, msg_id: Any, params: dict) -> None:
        mode = self.mode
        if method == "initialize":
            root = params.get("rootUri")
            self.root = Path(root[len("file://"):]) if isinstance(root, str) and root.startswith("file://") else None
            if mode == "no-init":
                return
            if mode == "late-init" and not self.told:
                self.initialize = msg_id
                return
            self.initialized(msg_id)
            return
        if method == "shutdown":
            self.answer(msg_id, None)
            return
        uri = (params.get("textDocument") or {}).get("uri", "file:///unknown")
        line = (params.get("position") or {}).get("line", 0)
        if mode in ("hang", "no-init"):
            return
        dies = mode == "die" or (mode == "die-once" and not (self.out / "died").exists())
        if method == "textDocument/definition" and dies:
            (self.out / "died").write_text("1")
            print("dying on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        if mode == "garbage":
            variants = garbage(uri)
            self.answer(msg_id, variants[line % len(variants)])
            return
        if mode == "symbols":
            self.symbols(method, msg_id, params)
            return
        if mode == "junk":
            variants = junk()
            self.stdout.write(variants[line % len(variants)])
            self.stdout.flush()
            return
        answers = {"textDocument/definition": _location(uri, {"line": 0, "character": 0},
                                                        {"line": 0, "character": 1}),
                   "textDocument/hover": {"contents": "fine"}, "textDocument/references": [],
                   "textDocument/documentSymbol": []}
        if method in answers:
            self.answer(msg_id, answers[method])
        else:
            self.write({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no {method}"}})


    # ---- symbols ---------------------------------------------------------------------------------------------

    def progress(self) -> None:
        self.write({"jsonrpc": "2.0", "method": "$/progress",
                    "params": {"token": "index", "value": {"kind": "begin", "title": "indexing"}}})
        if not (self.out / "loading").exists():
            self.write({"jsonrpc": "2.0", "method": "$/progress",
                        "params": {"token": "index", "value": {"kind": "end"}}})

    def synced(self, params: dict) -> None:
        if "textDocument" in params and "text" in params["textDocument"]:
            self.texts[params["textDocument"]["uri"]] = params["textDocument"]["text"]
        elif params.get("contentChanges"):
            self.texts[params["textDocument"]["uri"]] = params["contentChanges"][-1]["text"]

    def text_of(self, uri: str) -> str:
        if uri in self.texts:
            return self.texts[uri]
        try:
            return Path(uri[len("file://"):]).read_text(encoding=UTF8)
        except (OSError, ValueError):
            return ""

    def symbols(self, method: str, msg_id: Any, params: dict) -> None:
        hold = self.out / "hold"
        if hold.exists() and hold.read_text().strip() == method:
            return
        uri = (params.get("textDocument") or {}).get("uri", "")
        if method == "textDocument/documentSymbol":
            self.answer(msg_id, document_symbols(self.text_of(uri)))
        elif method == "textDocument/references":
            self.answer(msg_id, self.references(uri, params.get("position") or {}))
        else:
            self.write({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no {method}"}})

    def references(self, uri: str, position: dict) -> list[dict]:
        lines = re.split(r"\r\n|\r|\n", self.text_of(uri))
        line = lines[position.get("line", 0)] if position.get("line", 0) < len(lines) else ""
        word = re.match(r"\w*", line[position.get("character", 0):]).group()
        texts = dict(self.texts)
        for path in sorted(self.root.glob("*.py")) if self.root else []:
            texts.setdefault(path.as_uri(), path.read_text(encoding=UTF8, errors="replace"))
        found = []
        for other, text in texts.items():
            for n, row in enumerate(re.split(r"\r\n|\r|\n", text)):
                for m in re.finditer(rf"\b{re.escape(word)}\b", row) if word else ():
                    if (other, n, m.start()) != (uri, position.get("line"), position.get("character")):
                        found.append(_location(other, {"line": n, "character": m.start()},
                                               {"line": n, "character": m.end()}))
        return found


def document_symbols(text: str) -> list[dict]:
    """DocumentSymbols of Python text (UTF-16 columns), each starting at its `def` or `class` as jedi does; [] when
    it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = re.split(r"\r\n|\r|\n", text)

    def utf16(row: int, byte: int) -> int:
        before = lines[row].encode(UTF8, "surrogatepass")[:byte].decode(UTF8, "ignore")
        return len(before.encode("utf-16-le", "surrogatepass")) // 2

    def one(node: Any, method: bool) -> Optional[dict]:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        row = node.lineno - 1
        start = utf16(row, node.col_offset)
        after = lines[row][len(lines[row].encode(UTF8, "surrogatepass")[:node.col_offset].decode(UTF8, "ignore")):]
        keyword = re.search(rf"(def|class)\s+(?={re.escape(node.name)}\b)", after)
        name_at = start + (keyword.end() if keyword else 0)  # the text between is ASCII: the same in UTF-16
        children = [c for c in (one(n, True) for n in node.body) if c] if isinstance(node, ast.ClassDef) else []
        return {"name": node.name, "kind": 5 if isinstance(node, ast.ClassDef) else 6 if method else 12,
                "range": {"start": {"line": row, "character": start},
                          "end": {"line": node.end_lineno - 1,
                                  "character": utf16(node.end_lineno - 1, node.end_col_offset)}},
                "selectionRange": {"start": {"line": row, "character": name_at},
                                   "end": {"line": row, "character": name_at + len(node.name)}},
                "children": children}

    return [s for s in (one(n, False) for n in tree.body) if s]


if __name__ == "__main__":
    Server(sys.argv[1], Path(sys.argv[2])).serve()
