-- :AgentInstall: a virtual environment under stdpath('data')/agent-lsp/venv with the server in it, installed from
-- the wheel in this plugin's wheels/ (the release archive carries one) when there is one, else from the package
-- index. Runs in the background with a notification per step; the default command then finds the server there.
local M = {}

M.MIN_PYTHON = { 3, 11 }
M.PYTHONS = { 'python3', 'python3.13', 'python3.12', 'python3.11', 'python' }

local function root()  -- lua/agent_lsp/install.lua -> the plugin's directory
  return vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')
end

function M.venv()
  return vim.fn.stdpath('data') .. '/agent-lsp/venv'
end

-- The installed server's program, or nil when :AgentInstall has not run.
function M.program()
  local program = M.venv() .. '/bin/agent-lsp'
  return vim.fn.executable(program) == 1 and program or nil
end

-- The newest wheel in the plugin's wheels/, or nil.
function M.wheel()
  local wheels = vim.fn.glob(root() .. '/wheels/agent_lsp_server-*.whl', true, true)
  table.sort(wheels)
  return wheels[#wheels]
end

-- "X.Y" of `python`, or nil when it does not run.
function M.python_version(python)
  if vim.fn.executable(python) ~= 1 then
    return nil
  end
  local out = vim.fn.system({ python, '-c', 'import sys; print("%d.%d" % sys.version_info[:2])' })
  return vim.v.shell_error == 0 and out:match('^(%d+%.%d+)') or nil
end

-- The first Python 3.11+ (vim.g.agent_lsp_python first when set), and its version; or nil and what was found.
function M.find_python()
  local seen = {}
  local candidates = vim.list_extend(vim.g.agent_lsp_python and { vim.g.agent_lsp_python } or {}, vim.deepcopy(M.PYTHONS))
  for _, python in ipairs(candidates) do
    local version = M.python_version(python)
    if version then
      local major, minor = version:match('(%d+)%.(%d+)')
      if tonumber(major) > M.MIN_PYTHON[1] or (tonumber(major) == M.MIN_PYTHON[1] and tonumber(minor) >= M.MIN_PYTHON[2]) then
        return python, version
      end
      table.insert(seen, python .. ' is ' .. version)
    end
  end
  return nil, #seen > 0 and table.concat(seen, ', ') or 'no python3 on PATH'
end

local function notify(msg, level)
  vim.schedule(function()
    vim.notify('agent-lsp: ' .. msg, level or vim.log.levels.INFO)
  end)
end

-- Run the steps ({label, argv}) one after the other; `done(ok, message)` at the end.
local function steps(list, done)
  local i = 0
  local function next_step()
    i = i + 1
    local step = list[i]
    if not step then
      return done(true)
    end
    notify(string.format('[%d/%d] %s', i, #list, step[1]))
    local out = {}
    local function collect(_, data)
      for _, line in ipairs(data) do
        if line ~= '' then
          table.insert(out, line)
        end
      end
    end
    local job = vim.fn.jobstart(step[2], {
      on_stdout = collect, on_stderr = collect, stdin = 'null',
      on_exit = function(_, code)
        if code ~= 0 then
          return done(false, string.format('%s failed (exit %d): %s', step[1], code,
            table.concat(vim.list_slice(out, math.max(1, #out - 5)), '\n')))
        end
        next_step()
      end,
    })
    if job <= 0 then
      done(false, step[1] .. ': ' .. step[2][1] .. ' could not be run')
    end
  end
  next_step()
end

-- Install (or upgrade) the server; `on_done(ok, message)` when finished (also notified).
function M.run(on_done)
  local python, version = M.find_python()
  local finish = function(ok, message)
    notify(message, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
    if on_done then
      vim.schedule(function() on_done(ok, message) end)
    end
  end
  if not python then
    return finish(false, 'Python 3.11 or newer is needed (' .. version .. '): install it (e.g. apt install '
      .. 'python3.11, or from python.org), or set vim.g.agent_lsp_python to its path, then run :AgentInstall again')
  end
  local venv = M.venv()
  local source = M.wheel() or 'agent-lsp-server'
  vim.fn.mkdir(vim.fn.fnamemodify(venv, ':h'), 'p')
  steps({
    { 'making a virtual environment with ' .. python .. ' (Python ' .. version .. ') in ' .. venv,
      { python, '-m', 'venv', venv } },
    { 'installing ' .. vim.fn.fnamemodify(source, ':t') .. (M.wheel() and ' (from the plugin)' or ' (from PyPI)'),
      { venv .. '/bin/python', '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--upgrade', source } },
    { 'checking the server', { venv .. '/bin/agent-lsp', '--version' } },
  }, function(ok, message)
    if not ok then
      return finish(false, message)
    end
    require('agent_lsp.config').use_installed()
    local said = vim.trim(vim.fn.system({ venv .. '/bin/agent-lsp', '--version' }))
    finish(true, 'installed ' .. said .. ' in ' .. venv .. '; :checkhealth agent_lsp checks it')
  end)
end

return M
