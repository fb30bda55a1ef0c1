-- Is the program we start agent-lsp? Its `--version` line before starting it, its initialize result after;
-- and the one message for each way it is not (missing, not executable, another program, too old).
local M = {}

M.NAME = 'agent-lsp-server'  -- the distribution's name, in `--version` and serverInfo.name
M.MIN_PROTOCOL = 1
M.INSTALL = '`pipx install agent-lsp-server` or `uv tool install agent-lsp-server`'
M.SETTING = '`cmd` in require("agent_lsp").setup()'

local function shown(cmd)
  return table.concat(cmd, ' ')
end

-- nil when cmd[1] can be run; else the message saying what to do.
function M.missing(cmd)
  local program = cmd[1]
  if vim.fn.executable(program) == 1 then
    return nil
  end
  local why = vim.fn.filereadable(vim.fn.expand(program)) == 1 and 'is not executable' or 'was not found'
  return string.format('agent-lsp %s (`%s`). Install it with %s, or set %s to its full path.', why, program,
    M.INSTALL, M.SETTING)
end

function M.not_ours(cmd, reported)
  return string.format('`%s` is not agent-lsp (it reports `%s`). Install agent-lsp with %s and set %s to its path.',
    shown(cmd), reported, M.INSTALL, M.SETTING)
end

-- Parse a `--version` line: name, version, protocol (a number), or nil when it is not agent-lsp's.
function M.parse_version(line)
  local name, version, protocol = line:match('^(%S+) (%S+) %(protocol (%d+)%)$')
  if name ~= M.NAME then
    return nil
  end
  return name, version, tonumber(protocol)
end

-- Run `<cmd> --version` (a hung program is killed after `ms`). Returns ok, what it said / the message.
function M.check_version(cmd, ms)
  local missing = M.missing(cmd)
  if missing then
    return false, missing
  end
  local out = {}
  local function collect(_, data)
    for _, line in ipairs(data) do
      if line ~= '' then
        table.insert(out, line)
      end
    end
  end
  local argv = vim.list_extend(vim.deepcopy(cmd), { '--version' })
  local ok_job, job = pcall(vim.fn.jobstart, argv, { on_stdout = collect, on_stderr = collect, stdin = 'null' })
  if not ok_job or job <= 0 then
    return false, M.not_ours(cmd, 'it could not be run')
  end
  local code = vim.fn.jobwait({ job }, ms or 10000)[1]
  if code == -1 then
    vim.fn.jobstop(job)
    return false, M.not_ours(cmd, '--version did not answer')
  end
  local line = vim.trim(out[1] or '')
  local name, _, protocol = M.parse_version(line)
  if code ~= 0 or not name then
    return false, M.not_ours(cmd, line ~= '' and line or ('exit code ' .. code))
  end
  if protocol < M.MIN_PROTOCOL then
    return false, M.not_ours(cmd, line)
  end
  return true, line
end

-- After initialize: nil when the server is agent-lsp with protocol >= 1; else the message.
function M.check_init(cmd, result)
  local info = result and result.serverInfo
  local agent = result and result.capabilities and result.capabilities.experimental
    and result.capabilities.experimental.agent
  local name = type(info) == 'table' and info.name or nil
  local protocol = type(agent) == 'table' and tonumber(agent.protocolVersion) or nil
  if name == M.NAME and protocol and protocol >= M.MIN_PROTOCOL then
    return nil
  end
  local reported = string.format('%s %s, protocol %s', name or 'no serverInfo.name',
    type(info) == 'table' and info.version or '', protocol or 'none'):gsub('  ', ' ')
  return M.not_ours(cmd, reported)
end

-- The `features` list of the initialize result, as a set.
function M.features(result)
  local agent = result and result.capabilities and result.capabilities.experimental
    and result.capabilities.experimental.agent
  local set = {}
  if type(agent) == 'table' and type(agent.features) == 'table' then
    for _, f in ipairs(agent.features) do
      set[f] = true
    end
  end
  return set
end

return M
