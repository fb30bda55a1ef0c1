"""The `mcpServers` setting and .mcp.json: what is a server, and bad entries as warnings naming them."""

from agent_lsp.config import Layers, clean
from agent_lsp.config.mcp_servers import ServerConfig
from agent_lsp.config.mcp_json import read_mcp_json
from agent_lsp.mcp.server_tool import model_name


def test_stdio_and_http_servers_and_a_bad_entry_beside_them():
    good, warnings = clean({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}},
        "docs": {"url": "https://example.test/mcp", "headers": {"X": "y"}, "startTimeout": 5},
        "old": {"type": "sse", "url": "https://example.test/sse"},
        "broken": {"command": "x", "args": "not a list"},
        "impatient": {"command": "x", "startTimeout": 0}}}, "initializationOptions")
    assert good["mcp_servers"] == {
        "git": ServerConfig("stdio", command="uvx", args=("mcp-server-git",), env=(("A", "1"),), start_timeout=60),
        "docs": ServerConfig("http", url="https://example.test/mcp", headers=(("X", "y"),), start_timeout=5)}
    assert warnings == ["agent-lsp: setting `mcpServers` from initializationOptions server `old`: unknown type 'sse' "
                        "(stdio or http); server `broken`: `args` must be a list of strings; server `impatient`: "
                        "`startTimeout` must be a number of seconds from 1 to 600 (that server is not started)."]


def test_the_layers_servers_add_up():
    one, _ = clean({"mcpServers": {"a": {"command": "a"}}}, "initializationOptions")
    two, _ = clean({"mcpServers": {"b": {"command": "b"}}}, "workspace configuration")
    assert set(Layers(initialization_options=one, workspace=two).resolve().mcp_servers) == {"a", "b"}


def test_mcp_json_that_is_not_json_or_has_no_servers(tmp_path):
    assert read_mcp_json(tmp_path) == (None, [])
    (tmp_path / ".mcp.json").write_text("[]")
    assert read_mcp_json(tmp_path)[1] == [f"agent-lsp: {tmp_path}/.mcp.json must hold an object with the field "
                                          "`mcpServers`; it is ignored."]


def test_model_names_keep_to_what_model_apis_accept():
    assert model_name("my.server", "get file") == "mcp__my_server__get_file"
    assert len(model_name("s", "x" * 100)) == 64
