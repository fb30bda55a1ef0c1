-- Shared by the headless tests: a scratch workspace, the scripted Messages API, waiting, asserting, and
-- exiting with a status (an uncaught error would leave headless Neovim running forever).
-- Each test file is run as: nvim --headless -u NONE -i NONE -n -c "luafile tests/test_x.lua"
local H = {}

local here = debug.getinfo(1, 'S').source:sub(2)
H.plugin = vim.fn.fnamemodify(here, ':p:h:h')  -- client-nvim/
H.repo = vim.fn.fnamemodify(H.plugin, ':h')

local jobs = {}

-- A new directory with `files` ({relative path = text}, folders made as needed), made the current directory; the plugin loaded as
-- a user would have it (the runtimepath entry and its plugin/ file), unless `plugin` is false.
function H.workspace(files, plugin)
  H.dir = vim.fn.resolve(vim.fn.tempname())
  vim.fn.mkdir(H.dir, 'p')
  for path, text in pairs(files or {}) do
    vim.fn.mkdir(vim.fn.fnamemodify(H.dir .. '/' .. path, ':h'), 'p')
    vim.fn.writefile(vim.split(text, '\n', { plain = true }), H.dir .. '/' .. path, 'b')
  end
  vim.cmd('cd ' .. vim.fn.fnameescape(H.dir))
  if plugin ~= false then
    vim.opt.runtimepath:prepend(H.plugin)
    vim.cmd('runtime plugin/agent_lsp.lua')
  end
  return H.dir
end

-- Start tests/fakes/messages_api.py with this script and point the server's anthropic SDK at it.
function H.fake_api(script)
  local script_file = H.dir .. '/.script.json'
  H.record = H.dir .. '/.requests.json'
  vim.fn.writefile({ vim.fn.json_encode(script) }, script_file)
  local url
  table.insert(jobs, vim.fn.jobstart({ 'python3', '-m', 'tests.fakes.messages_api', script_file,
    '--record', H.record }, {
    cwd = H.repo,
    on_stdout = function(_, data)
      url = url or (data[1] ~= '' and data[1] or nil)
    end,
  }))
  H.wait(H.CEILING, function() return url ~= nil end, 'the fake Messages API to start')
  vim.env.ANTHROPIC_API_KEY = 'test'
  vim.env.ANTHROPIC_BASE_URL = url
end

-- The request bodies the fake received, in order.
function H.requests()
  return vim.fn.json_decode(table.concat(vim.fn.readfile(H.record), '\n'))
end

-- setup() with a server that keeps its sessions in the workspace, not in the user's state directory.
function H.setup(opts)
  opts = opts or {}
  opts.cmd = opts.cmd or { 'agent-lsp', '--data-dir', H.dir .. '/.data' }
  require('agent_lsp').setup(opts)
end

-- Where tests/run.sh installs jedi-language-server (its venv's python has pygls, for tests/silent_server.py).
H.JEDI_VENV = (vim.env.XDG_CACHE_HOME and vim.env.XDG_CACHE_HOME ~= '' and vim.env.XDG_CACHE_HOME
  or vim.env.HOME .. '/.cache') .. '/agent-lsp-client-tests/jedi-language-server-0.47.0'
H.JEDI = H.JEDI_VENV .. '/bin/jedi-language-server'

-- Start a language server beside agent-lsp, as a user's configuration would (a client per call, so a test can
-- run two of one kind), attached to the current buffer; returns its client once initialized.
function H.language_server(config)
  config.root_dir = H.dir
  local id
  if vim.fn.has('nvim-0.10') == 1 then  -- start_client is deprecated there; start() attaches the buffer
    id = vim.lsp.start(config, { reuse_client = function() return false end })
  else
    id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(0, id)
  end
  H.truthy(id, config.name .. ' did not start: ' .. table.concat(config.cmd, ' '))
  H.wait(H.CEILING, function()
    local c = vim.lsp.get_client_by_id(id)
    return c and c.initialized
  end, config.name .. ' to initialize')
  return vim.lsp.get_client_by_id(id)
end

-- A real language server: jedi-language-server, offered only `encoding` as its position encoding (0.7 does not
-- negotiate one: it is told).
function H.jedi(name, encoding)
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.general = { positionEncodings = { encoding } }
  local c = H.language_server({ name = name, cmd = { H.JEDI }, capabilities = caps, offset_encoding = encoding })
  H.eq(encoding, c.offset_encoding, name .. '\'s position encoding')
  return c
end

-- Every wait is for a condition; the ceiling is only there so that a broken test ends.
H.CEILING = 60000  -- as the Python suite's: a loaded CI machine starts a server and answers a first chat slowly

function H.wait(ms, cond, what)
  if not vim.wait(ms or H.CEILING, cond, 10) then
    error('timed out after ' .. ms .. ' ms waiting for ' .. what, 2)
  end
end

function H.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(string.format('%s\nexpected: %s\nactual:   %s', what, vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function H.truthy(value, what)
  if not value then
    error(what, 2)
  end
end

-- Replace vim.ui.select: answers[i] is the item picked at the i-th call (nil dismisses), or a function of
-- (items, opts) that returns it; every call is recorded as {items, prompt}. The answer comes later, as from a
-- real picker.
function H.stub_select(answers)
  local calls = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(calls, { items = items, prompt = opts.prompt })
    local answer = answers[#calls]
    if type(answer) == 'function' then
      answer = answer(items, opts)
    end
    vim.schedule(function()
      on_choice(answer)
    end)
  end
  return calls
end

-- Replace vim.notify; returns the recorded {msg, level} list.
function H.stub_notify()
  local seen = {}
  vim.notify = function(msg, level)
    table.insert(seen, { msg = msg, level = level })
  end
  return seen
end

-- Wait until the chat has answered; returns its result.
function H.wait_chat(chat, ms)
  H.wait(ms or H.CEILING, function() return not chat.running end, 'agent/chat to answer')
  return chat.result
end

-- Press keys as the user would (mappings apply), in the current window.
function H.keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
end

-- The windows of this tab showing each kind of chat buffer: {transcript = n, input = n}.
function H.chat_windows()
  local n = { transcript = 0, input = 0 }
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
    local kind = name:match('agent%-lsp://(%a+)/')
    if kind == 'chat' then
      n.transcript = n.transcript + 1
    elseif kind == 'input' then
      n.input = n.input + 1
    end
  end
  return n
end

-- The fold level of each line of a chat buffer, as shown in its window.
function H.fold_levels(chat)
  local win = vim.fn.win_findbuf(chat.view.buf)[1]
  return vim.api.nvim_win_call(win, function()
    local levels = {}
    for lnum = 1, vim.fn.line('$') do
      levels[lnum] = vim.fn.foldlevel(lnum)
    end
    return levels
  end)
end

local function finish(name, t0, ok, err)
  for _, job in ipairs(jobs) do
    vim.fn.jobstop(job)
  end
  local ms = math.floor((vim.loop.hrtime() - t0) / 1e6)
  if ok then
    io.stdout:write(string.format('ok - %s (%d ms)\n', name, ms))
  else
    io.stdout:write(string.format('not ok - %s (%d ms)\n%s\n', name, ms, err))
  end
  io.stdout:flush()
  vim.cmd('cquit ' .. (ok and 0 or 1))  -- :cquit exits even with modified buffers
end

-- End the test as skipped: `ok - name # SKIP why` on stdout, exit 0 (what the server under test does not offer yet).
function H.skip(name, why)
  for _, job in ipairs(jobs) do
    vim.fn.jobstop(job)
  end
  io.stdout:write(string.format('ok - %s # SKIP %s\n', name, why))
  io.stdout:flush()
  vim.cmd('cquit 0')
end

-- Run the test body; exit 0 when it passed, 1 with the error on stderr when it did not.
function H.run(name, body)
  local t0 = vim.loop.hrtime()
  finish(name, t0, xpcall(body, debug.traceback))
end

-- For tests that type in Insert mode: the body runs in a coroutine while Neovim's own loop runs, so the keys
-- of H.type are typed as a user types them (Insert mode stays on, its autocmds fire, timers run); the body
-- waits with H.await, never with H.wait (vim.wait does not take typed keys).
function H.run_typing(name, body)
  local t0 = vim.loop.hrtime()
  H.co = coroutine.create(function()
    return xpcall(body, debug.traceback)
  end)
  H.resume = function(...)
    local alive, ok, err = coroutine.resume(H.co, ...)
    if not alive then
      finish(name, t0, false, ok)
    elseif coroutine.status(H.co) == 'dead' then
      finish(name, t0, ok, err)
    end
  end
  H.resume()
end

-- In H.run_typing: let Neovim run until cond() holds (checked every 10 ms), or fail naming `what`.
function H.await(cond, what, ms)
  ms = ms or H.CEILING
  local ok, holds = pcall(cond)
  if ok and holds then
    return
  end
  local deadline = vim.loop.now() + ms
  local timer, busy, done = vim.loop.new_timer(), false, false
  timer:start(10, 10, vim.schedule_wrap(function()
    if busy or done then  -- busy: cond() itself waits (a request_sync), and Neovim runs this meanwhile
      return
    end
    busy = true
    ok, holds = pcall(cond)
    busy = false
    if not ok or holds or vim.loop.now() > deadline then
      done = true
      timer:stop()
      timer:close()
      H.resume()
    end
  end))
  coroutine.yield()
  if not ok then
    error(holds, 2)
  elseif not holds then
    error('timed out after ' .. ms .. ' ms waiting for ' .. what, 2)
  end
end

-- In H.run_typing: type keys (mappings apply) once the body waits; they are typed in order with later ones.
function H.type(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mt', false)
end

return H
