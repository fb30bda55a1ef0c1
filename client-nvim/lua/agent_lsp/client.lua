-- The one agent-lsp client of this Neovim: starting it (0.7 and 0.11 APIs), attaching workspace buffers,
-- sending requests, and what happens when the server is missing or dies.
local config = require('agent_lsp.config')
local identity = require('agent_lsp.identity')

local M = {}

local state = {
  id = nil,       -- client id while a server runs (or is starting)
  root = nil,     -- the workspace folder: Neovim's cwd when the server started
  ready = false,  -- initialize answered
  refused = nil,  -- why the running program was stopped (it is not agent-lsp): its exit says nothing more
  features = {},  -- the server's experimental.agent.features, as a set
  waiting = {},   -- functions to call with the client once it is ready
}

local function notify_error(msg)
  vim.notify('agent-lsp: ' .. msg, vim.log.levels.ERROR)
end

-- 0.11 clients are objects whose methods take self (dot calls are deprecated there); 0.7 clients hold
-- closures. Detect which by the metatable rather than by version.
local function call(client, method, ...)
  local mt = getmetatable(client)
  if mt and mt[method] then
    return client[method](client, ...)
  end
  return client[method](...)
end

-- Send a request; returns its id (nil when the client is stopping). With `bufnr`, Neovim first sends that
-- buffer's pending changes (else every buffer's).
function M.request(client, method, params, callback, bufnr)
  local ok, id = call(client, 'request', method, params, function(err, result)
    callback(err, result)
  end, bufnr)
  return ok and id or nil
end

function M.notify(client, method, params)
  return call(client, 'notify', method, params)
end

-- The answer of a request, waiting at most timeout_ms: result, or nil and why.
function M.request_sync(client, method, params, timeout_ms)
  local answer, why = call(client, 'request_sync', method, params, timeout_ms)
  if not answer then
    return nil, why or 'no answer'
  end
  if answer.err then
    return nil, answer.err.message or vim.inspect(answer.err)
  end
  return answer.result
end

function M.cancel(client, request_id)
  call(client, 'cancel_request', request_id)
end

-- Whether `buf` is a file under the workspace folder (Neovim's directory until the server starts).
function M.in_workspace(buf)
  if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= '' then
    return false
  end
  local root = state.root or vim.loop.cwd()
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= '' and name:sub(1, #root + 1) == root .. '/'
end

-- Attach a buffer so the server sees its text, unsaved changes included.
function M.attach(buf)
  if state.id and M.in_workspace(buf) and not vim.lsp.buf_is_attached(buf, state.id) then
    vim.lsp.buf_attach_client(buf, state.id)
  end
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  -- languageFeatures = true: every method the server lists in its experimental.agent.languageMethods
  caps.experimental.agent = { confirmTool = true, diagnostics = true, languageFeatures = true }
  return caps
end

local function on_exit(code, signal)
  -- 0.7 calls this from a libuv callback, where buffers cannot be touched.
  vim.schedule(function()
    local was_ready, refused = state.ready, state.refused
    state.id, state.ready, state.waiting, state.refused = nil, false, {}, nil
    local what
    if refused then
      what = 'the server is not agent-lsp'  -- already said, once
    elseif was_ready then
      what = 'the agent-lsp server exited'
      if code ~= 0 or signal ~= 0 then  -- a clean exit is a shutdown someone asked for
        notify_error(string.format('%s (exit code %d, signal %d); its log is in %s (:AgentLog)', what, code,
          signal, vim.lsp.get_log_path()))
      end
    else
      -- It never answered initialize: say what the program is when it is not ours, else how it ended.
      what = 'the agent-lsp server did not start'
      local ok, said = identity.check_version(config.options.cmd, 5000)
      notify_error(ok and string.format('%s (exit code %d, signal %d); its log is in %s (:AgentLog)', what,
        code, signal, vim.lsp.get_log_path()) or said)
    end
    require('agent_lsp.chat').on_server_exit(what)
    require('agent_lsp.index_status').disconnected()
  end)
end

-- Called with the initialize result: refuse a server that is not agent-lsp (name, protocol version).
local function on_init(client, result)
  local wrong = identity.check_init(config.options.cmd, result)
  if wrong then
    state.refused = true
    notify_error(wrong)
    vim.schedule(function()
      call(client, 'stop', true)
    end)
    return
  end
  state.features = identity.features(result)
  -- Neovim sends the didOpen of already attached buffers only after on_init returns: the first chat
  -- waits for that, so the server knows the open buffers (and the active one) when it starts.
  vim.schedule(function()
    state.ready = true
    local waiting = state.waiting
    state.waiting = {}
    for _, fn in ipairs(waiting) do
      fn(client)
    end
    require('agent_lsp.index_status').connected()
  end)
end

local function start()
  local opts = config.options
  local missing = identity.missing(opts.cmd)
  if missing then
    notify_error(missing)
    return false
  end
  state.root = vim.loop.cwd()
  local lsp_config = {
    name = 'agent-lsp',
    cmd = opts.cmd,
    root_dir = state.root,
    capabilities = capabilities(),
    init_options = config.wire_settings(),
    settings = { agentLsp = config.wire_settings() },
    handlers = {
      ['agent/update'] = function(_, params)
        require('agent_lsp.chat').on_update(params)
      end,
      -- What a code action's command answers (Neovim sends it without a callback of its own).
      ['workspace/executeCommand'] = function(err, result)
        require('agent_lsp.chat').on_command_result(err, result)
      end,
      ['agent/diagnostics'] = function(_, params, ctx)
        return require('agent_lsp.diagnostics').collect(params, vim.lsp.get_client_by_id(ctx.client_id))
      end,
      ['agent/languageFeature'] = function(_, params, ctx)
        return require('agent_lsp.language').answer(params, vim.lsp.get_client_by_id(ctx.client_id),
          config.language_timeout_ms())
      end,
    },
    on_init = on_init,
    on_exit = on_exit,
    on_attach = function(c, buf)
      require('agent_lsp.suggestions').on_attach(c, buf)
    end,
  }
  if vim.lsp.start then
    -- attach = false: the chat buffer is not a file; workspace buffers are attached below.
    state.id = vim.lsp.start(lsp_config, { attach = false, silent = true })
  else
    state.id = vim.lsp.start_client(lsp_config)
  end
  if not state.id then
    notify_error('could not start `' .. table.concat(opts.cmd, ' ') .. '`; see ' .. vim.lsp.get_log_path())
    return false
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(buf)
  end
  return true
end

-- Call fn(client) once the server is initialized, starting it if needed. Returns false when it cannot start
-- (the user has been told why).
function M.when_ready(fn)
  if not state.id and not start() then
    return false
  end
  if state.ready then
    fn(vim.lsp.get_client_by_id(state.id))
  else
    table.insert(state.waiting, fn)
  end
  return true
end

-- Whether the running server lists `name` in its features (PROTOCOL §8).
function M.has(name)
  return state.ready and state.features[name] == true
end

-- The workspace folder's URI (the server runs in it), or nil before the server started.
function M.root_uri()
  return state.root and vim.uri_from_fname(state.root) or nil
end

-- The workspace folder (the server runs in it), or nil before the server started.
function M.root_dir()
  return state.root
end

-- Stop the server (it starts again with the next request, in Neovim's directory of then).
function M.stop()
  local c = state.id and vim.lsp.get_client_by_id(state.id)
  if c then
    call(c, 'stop')
  end
end

-- Tell the running server the settings changed (workspace/didChangeConfiguration with the whole `agentLsp`
-- object, which the server takes as it is); workspace/configuration answers them from now on too.
function M.push_settings()
  local c = M.get()
  if not c then
    return
  end
  local settings = { agentLsp = config.wire_settings() }
  c.config.settings = settings
  if c.settings ~= nil then  -- 0.11 answers workspace/configuration from client.settings
    c.settings = settings
  end
  M.notify(c, 'workspace/didChangeConfiguration', { settings = settings })
end

-- Whether a server runs or is starting.
function M.running()
  return state.id ~= nil
end

-- The running client, or nil.
function M.get()
  return state.ready and vim.lsp.get_client_by_id(state.id) or nil
end

return M
