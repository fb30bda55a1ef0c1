-- Answers the server's `agent/languageFeature {method, params}` (PROTOCOL §9) with what the editor's *other*
-- language servers answer to that standard request: sent to every client attached to the document (not
-- agent-lsp itself) that supports it, positions converted between agent-lsp's position encoding and each
-- server's, the answers merged (lists concatenated and de-duplicated; hover, prepareRename and rename: the
-- first answer; null when none answers; prepareRename's default behaviour when a server renames without one;
-- references without includeDeclaration less what the definition request names at that position).
local M = {}

-- The server capability behind each standard method the server may ask (its initialize result lists them as
-- experimental.agent.languageMethods; the plugin declares languageFeatures = true: all of them).
local PROVIDER = {
  ['textDocument/definition'] = 'definitionProvider',
  ['textDocument/typeDefinition'] = 'typeDefinitionProvider',
  ['textDocument/implementation'] = 'implementationProvider',
  ['textDocument/references'] = 'referencesProvider',
  ['textDocument/hover'] = 'hoverProvider',
  ['textDocument/documentSymbol'] = 'documentSymbolProvider',
  ['workspace/symbol'] = 'workspaceSymbolProvider',
  ['textDocument/prepareCallHierarchy'] = 'callHierarchyProvider',
  ['callHierarchy/incomingCalls'] = 'callHierarchyProvider',
  ['callHierarchy/outgoingCalls'] = 'callHierarchyProvider',
  ['textDocument/prepareRename'] = 'renameProvider',
  ['textDocument/rename'] = 'renameProvider',
}

-- 0.7's clients without server_capabilities (older plugins' fakes) still have resolved_capabilities.
local RESOLVED = {
  definitionProvider = 'goto_definition',
  typeDefinitionProvider = 'type_definition',
  implementationProvider = 'implementation',
  referencesProvider = 'find_references',
  hoverProvider = 'hover',
  documentSymbolProvider = 'document_symbol',
  workspaceSymbolProvider = 'workspace_symbol',
  callHierarchyProvider = 'call_hierarchy',
  renameProvider = 'rename',
}

-- Whether the plugin answers `method` (it declares languageFeatures = true: every method the server lists).
function M.answers(method)
  return PROVIDER[method] ~= nil
end

local function invalid(message)
  return nil, { code = -32602, message = message }  -- InvalidParams
end

-- 0.11 clients are objects whose methods take self; 0.7 clients hold closures.
local function call(client, method, ...)
  local mt = getmetatable(client)
  if mt and mt[method] then
    return client[method](client, ...)
  end
  return client[method](...)
end

local function supports(client, method)
  local mt = getmetatable(client)
  if mt and mt.supports_method then  -- 0.11: static and dynamically registered capabilities
    return client:supports_method(method)
  end
  local provider = PROVIDER[method]
  local caps = client.server_capabilities
  local value
  if caps then
    value = caps[provider]
  elseif client.resolved_capabilities then
    value = client.resolved_capabilities[RESOLVED[provider]]
  end
  if method == 'textDocument/prepareRename' then
    return type(value) == 'table' and value.prepareProvider == true
  end
  return value ~= nil and value ~= false and value ~= vim.NIL
end

-- Whether a language client has stopped (0.7 and 0.11 APIs).
function M.stopped(client)
  if client.is_stopped then
    return call(client, 'is_stopped')
  end
  return false
end

-- Every language client of this Neovim.
function M.all_clients()
  return vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
end

local function clients_of(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(buf))
end

-- A copy of decoded JSON to convert in place: 0.7's vim.deepcopy refuses vim.NIL (a null in a list); the
-- metatable that marks vim.empty_dict() is kept.
local function copy(value)
  if type(value) ~= 'table' then
    return value
  end
  local out = {}
  for k, v in pairs(value) do
    out[k] = copy(v)
  end
  return setmetatable(out, getmetatable(value))
end

local function by_id(list)
  table.sort(list, function(a, b) return a.id < b.id end)
  return list
end

-- ---- waiting ---------------------------------------------------------------------------------------------

-- Wait until cond() or the deadline (vim.loop.now() ms). 0.11 runs a server request's handler in a coroutine:
-- yield there, so Neovim stays responsive; 0.7 runs it on the main loop, where vim.wait keeps events flowing.
local function wait_until(cond, deadline)
  if cond() then
    return true
  end
  local co = coroutine.running()
  if co and coroutine.isyieldable() then
    local timer, done = vim.loop.new_timer(), false
    timer:start(10, 10, vim.schedule_wrap(function()
      if not done and (cond() or vim.loop.now() >= deadline) then
        done = true
        timer:stop()
        timer:close()
        coroutine.resume(co)
      end
    end))
    coroutine.yield()
    return cond()
  end
  return vim.wait(math.max(deadline - vim.loop.now(), 0), cond, 10)
end

-- ---- positions -------------------------------------------------------------------------------------------

local positions = require('agent_lsp.positions')
local to_bytes, from_bytes = positions.to_bytes, positions.from_bytes

-- Converts positions from one encoding to another, reading each document's lines once: the loaded buffer's
-- (unsaved text included), else the file's.
local function converter(from, to)
  if from == to then
    return nil
  end
  local loaded, files = nil, {}
  local function line_of(uri, row)
    if not loaded then
      loaded = {}
      for _, buf in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) ~= '' then
          loaded[vim.uri_from_bufnr(buf)] = buf
        end
      end
    end
    if loaded[uri] then
      return vim.api.nvim_buf_get_lines(loaded[uri], row, row + 1, false)[1] or ''
    end
    if files[uri] == nil then
      local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri))
      files[uri] = ok and lines or {}
    end
    return files[uri][row + 1] or ''
  end
  local conv = {}
  function conv.position(uri, pos)
    if type(pos) == 'table' and type(pos.line) == 'number' and type(pos.character) == 'number' then
      local line = line_of(uri, pos.line)
      pos.character = from_bytes(line, to_bytes(line, pos.character, from), to)
    end
  end
  function conv.range(uri, range)
    if type(range) == 'table' then
      conv.position(uri, range.start)
      conv.position(uri, range['end'])
    end
  end
  return conv
end

local function each(list, fn)
  if type(list) == 'table' then
    for _, item in ipairs(list) do
      fn(item)
    end
  end
end

-- What in a request's params or result is a position, and in which document. `conv` changes it in place.
local function convert_item(conv, item)  -- CallHierarchyItem
  if type(item) == 'table' then
    conv.range(item.uri, item.range)
    conv.range(item.uri, item.selectionRange)
  end
end

local function convert_location(conv, loc)  -- Location or LocationLink
  if type(loc) ~= 'table' then
    return
  end
  if loc.targetUri then
    conv.range(loc.targetUri, loc.targetRange)
    conv.range(loc.targetUri, loc.targetSelectionRange)
  else
    conv.range(loc.uri, loc.range)
  end
end

local function convert_symbols(conv, uri, symbols)  -- DocumentSymbol[] or SymbolInformation[]
  each(symbols, function(s)
    if type(s.location) == 'table' then
      conv.range(s.location.uri, s.location.range)
    else
      conv.range(uri, s.range)
      conv.range(uri, s.selectionRange)
      convert_symbols(conv, uri, s.children)
    end
  end)
end

local function convert_params(conv, method, params)
  if method:find('^callHierarchy/') then
    convert_item(conv, params.item)
  elseif params.position then
    conv.position(params.textDocument.uri, params.position)
  end
end

local function convert_result(conv, method, params, result)
  if type(result) ~= 'table' then
    return
  end
  local uri = params.textDocument and params.textDocument.uri
  if method == 'textDocument/hover' or method == 'textDocument/prepareRename' then
    conv.range(uri, result.range or (result.start and result))
  elseif method == 'textDocument/documentSymbol' or method == 'workspace/symbol' then
    convert_symbols(conv, uri, result)
  elseif method == 'textDocument/prepareCallHierarchy' then
    each(result, function(item) convert_item(conv, item) end)
  elseif method == 'callHierarchy/incomingCalls' then
    each(result, function(c)
      convert_item(conv, c.from)
      each(c.fromRanges, function(r) conv.range(c.from and c.from.uri, r) end)
    end)
  elseif method == 'callHierarchy/outgoingCalls' then
    each(result, function(c)
      convert_item(conv, c.to)
      each(c.fromRanges, function(r) conv.range(params.item.uri, r) end)  -- in the caller
    end)
  elseif method == 'textDocument/rename' then
    for edit_uri, edits in pairs(type(result.changes) == 'table' and result.changes or {}) do
      each(edits, function(e) conv.range(edit_uri, e.range) end)
    end
    each(result.documentChanges, function(change)
      if type(change.textDocument) == 'table' then
        each(change.edits, function(e) conv.range(change.textDocument.uri, e.range) end)
      end
    end)
  else  -- definition, typeDefinition, implementation, references: Location, Location[] or LocationLink[]
    if result.uri or result.targetUri then
      convert_location(conv, result)
    else
      each(result, function(loc)
        convert_location(conv, loc)
        if loc.originSelectionRange then
          conv.range(uri, loc.originSelectionRange)
        end
      end)
    end
  end
end

-- ---- merging ---------------------------------------------------------------------------------------------

local function empty_hover(h)
  local c = type(h) == 'table' and h.contents
  if type(c) == 'string' then
    return c == ''
  end
  if type(c) ~= 'table' then
    return true
  end
  if c.value ~= nil then
    return c.value == ''
  end
  return #c == 0
end

local FIRST = { ['textDocument/hover'] = true, ['textDocument/prepareRename'] = true,
  ['textDocument/rename'] = true }

local LOCATIONS = { ['textDocument/definition'] = true, ['textDocument/typeDefinition'] = true,
  ['textDocument/implementation'] = true, ['textDocument/references'] = true }

-- answers: the results of the servers that answered, in client id order.
local function merge(method, answers, uri)
  if FIRST[method] then
    for _, r in ipairs(answers) do
      if r ~= nil and r ~= vim.NIL and not (method == 'textDocument/hover' and empty_hover(r)) then
        return r
      end
    end
    return vim.NIL
  end
  local lists, links, locations, trees, flat = {}, false, false, false, false
  for _, r in ipairs(answers) do
    if type(r) == 'table' then
      if r.uri or r.targetUri then
        r = { r }  -- a definition's single Location
      end
      for _, item in ipairs(r) do
        links = links or item.targetUri ~= nil
        locations = locations or item.uri ~= nil
        trees = trees or item.location == nil
        flat = flat or item.location ~= nil
      end
      table.insert(lists, r)
    end
  end
  if #lists == 0 then
    return vim.NIL
  end
  local merged, seen = {}, {}
  local function add(item)
    local key = vim.inspect(item)  -- vim.inspect sorts keys: equal items give equal keys
    if not seen[key] then
      seen[key] = true
      table.insert(merged, item)
    end
  end
  local function flatten(symbol, container)  -- DocumentSymbol -> SymbolInformation
    add({ name = symbol.name, kind = symbol.kind, containerName = container,
      location = { uri = uri, range = symbol.range } })
    each(symbol.children, function(child) flatten(child, symbol.name) end)
  end
  -- One server's Location[] beside another's LocationLink[]: all Locations. One's DocumentSymbol[] beside
  -- another's SymbolInformation[]: all SymbolInformation. (A result is one shape or the other, never both.)
  local mixed_links = LOCATIONS[method] and links and locations
  local mixed_symbols = method == 'textDocument/documentSymbol' and trees and flat
  for _, list in ipairs(lists) do
    for _, item in ipairs(list) do
      if mixed_links and item.targetUri then
        add({ uri = item.targetUri, range = item.targetSelectionRange or item.targetRange })
      elseif mixed_symbols and item.location == nil then
        flatten(item, nil)
      else
        add(item)
      end
    end
  end
  return merged
end

M._merge = merge  -- for the tests: shapes no pair of real servers gives

-- ---- the request -----------------------------------------------------------------------------------------

-- callHierarchy items by the client that made them, so incoming/outgoing calls go back to it.
local origins, origin_count = {}, 0

local function item_key(item)
  local s = type(item.selectionRange) == 'table' and item.selectionRange.start or {}
  return table.concat({ tostring(item.uri), tostring(item.name), tostring(s.line), tostring(s.character) }, '\0')
end

local function remember_items(items, client_id)
  if origin_count > 1000 then
    origins, origin_count = {}, 0
  end
  each(items, function(item)
    origins[item_key(item)] = client_id
    origin_count = origin_count + 1
  end)
end

local function under(path, root)
  return type(root) == 'string' and (path == root or path:sub(1, #root + 1) == root .. '/')
end

-- Clients that serve files like this one elsewhere: its filetype in their configuration, or attached to a
-- buffer of the same filetype or extension; and whose root holds the file.
local function serving(buf, self_id)
  local path = vim.api.nvim_buf_get_name(buf)
  local ft, ext = vim.bo[buf].filetype, path:match('%.([^./]+)$')
  local found = {}
  for _, client in ipairs(M.all_clients()) do
    if client.id ~= self_id and not M.stopped(client) then
      local cfg = client.config or {}
      local matches = ft ~= '' and type(cfg.filetypes) == 'table' and vim.tbl_contains(cfg.filetypes, ft)
      if not matches then
        for other in pairs(client.attached_buffers or {}) do
          if vim.api.nvim_buf_is_valid(other) then
            local name = vim.api.nvim_buf_get_name(other)
            matches = matches or (ft ~= '' and vim.bo[other].filetype == ft)
              or (ext ~= nil and name:match('%.([^./]+)$') == ext)
          end
        end
      end
      local root = cfg.root_dir
      if matches and (root == nil or under(path, vim.fn.resolve(root)) or under(path, root)) then
        table.insert(found, client)
      end
    end
  end
  return found
end

-- The document's buffer, loaded (a file the user has not opened is read, so its language servers attach); nil
-- when there is no such buffer or file.
local function document(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) == fname then
      return buf
    end
  end
  if vim.fn.filereadable(fname) == 0 then
    return nil
  end
  local buf = vim.uri_to_bufnr(uri)
  vim.fn.bufload(buf)  -- runs the BufRead and FileType autocmds: lspconfig's, vim.lsp.enable()'s attach servers
  return buf
end

local function other_clients(buf, method, self_id)
  local attached = {}
  for _, client in ipairs(clients_of(buf)) do
    if client.id ~= self_id and not M.stopped(client) then
      table.insert(attached, client)
    end
  end
  if #attached == 0 then  -- nobody attached it (a file read just now): the servers of its kind
    for _, client in ipairs(serving(buf, self_id)) do
      vim.lsp.buf_attach_client(buf, client.id)
      table.insert(attached, client)
    end
  end
  local able = {}
  for _, client in ipairs(attached) do
    if supports(client, method) then
      table.insert(able, client)
    end
  end
  return by_id(able)
end

local function describe(failures)
  local parts = {}
  for _, f in ipairs(failures) do
    table.insert(parts, f.name .. ': ' .. f.why)
  end
  return table.concat(parts, '; ')
end

-- Sends `method` to each client, params converted into its encoding and its answer back into agent-lsp's.
-- Returns the batch: replies[i] ({result} or {err}) as they come, pending[i] the request ids still out.
local function send(clients, method, p, buf, self_encoding)
  local batch = { clients = clients, replies = {}, pending = {} }
  local replies, pending = batch.replies, batch.pending
  for i, client in ipairs(clients) do
    local encoding = client.offset_encoding or 'utf-16'
    local conv = converter(self_encoding, encoding)
    local sent = copy(p)
    if conv then
      convert_params(conv, method, sent)
    end
    local ok, request_id = call(client, 'request', method, sent, function(err, result)
      if replies[i] then
        return
      end
      if err then
        replies[i] = { err = err }
      else
        local back = converter(encoding, self_encoding)
        if back then
          convert_result(back, method, sent, result)
        end
        if type(result) == 'table' and type(result.changes) == 'table' and next(result.changes) == nil then
          result.changes = vim.empty_dict()  -- a WorkspaceEdit's map, which an empty Lua table would send as []
        end
        replies[i] = { result = result }
      end
      pending[i] = nil
    end, buf)
    if ok then
      pending[i] = not replies[i] and request_id or nil
    else
      replies[i] = { err = { message = 'the server is not running' } }
    end
  end
  return batch
end

-- After the wait: the non-null results, how many servers answered (null included: "nothing here" is an
-- answer), and the failures; requests still out are cancelled and their late answers dropped.
local function collect(batch, timeout_ms)
  local answers, answered, failures = {}, 0, {}
  for i, client in ipairs(batch.clients) do
    local reply = batch.replies[i]
    if not reply then
      pcall(call, client, 'cancel_request', batch.pending[i])  -- no pending request left behind
      batch.pending[i] = nil
      batch.replies[i] = { err = { message = 'timed out' } }  -- so a late answer is dropped
      table.insert(failures, { name = client.name, why = 'no answer within ' .. timeout_ms .. ' ms' })
    elseif reply.err then
      table.insert(failures, { name = client.name, why = tostring(reply.err.message or vim.inspect(reply.err)) })
    else
      answered = answered + 1
      if reply.result ~= nil and reply.result ~= vim.NIL then
        table.insert(answers, reply.result)
      end
    end
  end
  return answers, answered, failures
end

-- The references less those that start where a definition's target does (LocationLink: its
-- targetSelectionRange), as the VS Code client does it: some servers (jedi-language-server) list the
-- declaration whatever includeDeclaration says.
local function without_declaration(references, definitions)
  local declared = {}
  local function mark(d)
    if type(d) ~= 'table' then
      return
    end
    local uri, range = d.uri, d.range
    if d.targetUri then
      uri, range = d.targetUri, d.targetSelectionRange or d.targetRange
    end
    local s = type(range) == 'table' and range.start
    if type(uri) == 'string' and type(s) == 'table' then
      declared[table.concat({ uri, tostring(s.line), tostring(s.character) }, '\0')] = true
    end
  end
  for _, answer in ipairs(definitions) do
    if answer.uri or answer.targetUri then
      mark(answer)  -- a single Location
    else
      each(answer, mark)
    end
  end
  return vim.tbl_filter(function(r)
    local s = type(r) == 'table' and type(r.range) == 'table' and r.range.start
    return not (s and declared[table.concat({ tostring(r.uri), tostring(s.line), tostring(s.character) }, '\0')])
  end, references)
end

-- The handler of `agent/languageFeature`: returns the merged result (vim.NIL for null), or nil and an error.
-- `self_client` is agent-lsp's client (positions in params and result are in its encoding); `timeout_ms` bounds
-- the wait for the other servers.
function M.answer(params, self_client, timeout_ms)
  if type(params) ~= 'table' or type(params.method) ~= 'string' then
    return invalid('method: a string is required')
  end
  local method, p = params.method, params.params
  if not M.answers(method) then
    return invalid('method: ' .. method .. ' is not one this client answers')
  end
  if type(p) ~= 'table' then
    return invalid('params: an object is required')
  end
  local uri
  if method:find('^callHierarchy/') then
    if type(p.item) ~= 'table' or type(p.item.uri) ~= 'string' then
      return invalid('params.item.uri: a string is required')
    end
    uri = p.item.uri
  elseif method ~= 'workspace/symbol' then
    if type(p.textDocument) ~= 'table' or type(p.textDocument.uri) ~= 'string' then
      return invalid('params.textDocument.uri: a string is required')
    end
    uri = p.textDocument.uri
  end
  local include_declaration = true  -- as Neovim's own vim.lsp.buf.references() asks when not told
  if method == 'textDocument/references' and p.context ~= nil and p.context ~= vim.NIL then
    if type(p.context) ~= 'table' then
      return invalid('params.context: an object is required')
    end
    include_declaration = p.context.includeDeclaration
    if include_declaration == nil or include_declaration == vim.NIL then
      include_declaration = true
    elseif type(include_declaration) ~= 'boolean' then
      return invalid('params.context.includeDeclaration: a boolean is required')
    end
  end
  local self_id = self_client and self_client.id
  local self_encoding = self_client and self_client.offset_encoding or 'utf-16'

  local buf, clients
  if uri then
    buf = document(uri)
    if not buf then
      return vim.NIL  -- no such file: nothing answers
    end
    clients = other_clients(buf, method, self_id)
    if method == 'textDocument/prepareRename' and #clients == 0
      and #other_clients(buf, 'textDocument/rename', self_id) > 0 then
      -- Servers that rename without a prepareRename (jedi-language-server): as Neovim's own rename does, go
      -- ahead; null would say there is nothing to rename.
      return { defaultBehavior = true }
    end
    if method:find('^callHierarchy/') and origins[item_key(p.item)] then
      local origin = origins[item_key(p.item)]
      clients = vim.tbl_filter(function(c) return c.id == origin end, clients)
    end
  else
    clients = {}
    for _, client in ipairs(M.all_clients()) do
      if client.id ~= self_id and not M.stopped(client) and supports(client, method) then
        table.insert(clients, client)
      end
    end
    clients = by_id(clients)
  end
  if #clients == 0 then
    return vim.NIL
  end

  timeout_ms = timeout_ms or 4000
  local deadline = vim.loop.now() + timeout_ms
  -- A server attached just now may still be initializing.
  wait_until(function()
    for _, client in ipairs(clients) do
      if not client.initialized and not M.stopped(client) then
        return false
      end
    end
    return true
  end, deadline)

  local batch = send(clients, method, p, buf, self_encoding)
  local declared  -- references without the declaration: the definitions at that position, asked alongside
  if method == 'textDocument/references' and not include_declaration then
    local definers = vim.tbl_filter(function(c) return supports(c, 'textDocument/definition') end, clients)
    if #definers > 0 then
      declared = send(definers, 'textDocument/definition',
        { textDocument = p.textDocument, position = p.position }, buf, self_encoding)
    end
  end
  wait_until(function()
    return next(batch.pending) == nil and (declared == nil or next(declared.pending) == nil)
  end, deadline)

  local answers, answered, failures = collect(batch, timeout_ms)
  -- A definition that failed or came late only leaves its declaration in: the references stand.
  local definitions = declared and (collect(declared, timeout_ms))
  if answered == 0 and #failures > 0 then
    return nil, { code = -32603, message = method .. ' failed: ' .. describe(failures) }  -- InternalError
  end
  if method == 'textDocument/prepareCallHierarchy' then
    for i, client in ipairs(clients) do
      if batch.replies[i].result then
        remember_items(batch.replies[i].result, client.id)
      end
    end
  end
  local merged = merge(method, answers, uri)
  if definitions and type(merged) == 'table' then
    merged = without_declaration(merged, definitions)
  end
  return merged
end

return M
