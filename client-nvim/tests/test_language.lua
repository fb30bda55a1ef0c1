-- The server's agent/languageFeature request is answered by the buffer's other language servers (two real
-- jedi-language-server clients beside agent-lsp): the plugin declares the methods, sends the standard request
-- to the servers that support it, converts positions between agent-lsp's encoding (0.7: UTF-16, 0.11: UTF-8)
-- and theirs (UTF-32), sees the buffer's unsaved text, loads a file nobody opened, and merges the answers
-- (lists de-duplicated, mixed shapes made one, hover the first); references without includeDeclaration leave
-- out what the definition request names (jedi lists the declaration whatever it is told); null when no server
-- supports the method; bad input is -32602. Beside a server that never answers (tests/silent_server.py), the
-- wait is bounded, the answers that came are kept (a definition that never comes leaves the references
-- standing), and when none came, the error names the server; the wait follows the server's languageTimeout
-- setting.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('agent/languageFeature is answered by the other language servers', function()
  H.workspace({
    ['shop.py'] = 'def total(prices):\n    return sum(prices)\n\n\nTAX = "😀"; RATE = 2\n',
    ['main.py'] = 'from shop import total\n\ns = "😀" + str(total([1, 2]))\n',
  })
  H.setup()
  vim.cmd('edit main.py')
  vim.api.nvim_buf_set_lines(0, 3, 3, false, { 't = total([3])' })  -- unsaved: only the buffers know line 4
  local jedi_a, jedi_b = H.jedi('jedi-a', 'utf-32'), H.jedi('jedi-b', 'utf-32')
  local me
  require('agent_lsp.client').when_ready(function(c) me = c end)
  H.wait(H.CEILING, function() return me ~= nil end, 'agent-lsp to start')
  local language = require('agent_lsp.language')
  -- true: every method the server lists in its initialize result (docs/protocol.md), so each must be one the
  -- plugin answers.
  H.eq(true, me.config.capabilities.experimental.agent.languageFeatures, 'declared languageFeatures')
  local listed = me.server_capabilities.experimental.agent.languageMethods
  H.eq(12, #listed, 'the twelve methods of PROTOCOL §9: ' .. vim.inspect(listed))
  H.eq({}, vim.tbl_filter(function(m) return not language.answers(m) end, listed),
    'listed methods the plugin does not answer')
  local config = require('agent_lsp.config')
  H.eq(4000, config.language_timeout_ms(), 'the wait: 80% of the server\'s default 5 s')
  config.options.settings.languageTimeout = 10
  H.eq(8000, config.language_timeout_ms(), 'the wait: 80% of languageTimeout')
  config.options.language_timeout_ms = 1234
  H.eq(1234, config.language_timeout_ms(), 'the wait: language_timeout_ms')

  -- Columns in agent-lsp's encoding: `total` after the emoji on main.py:3 is character 14 (UTF-32), 15 in
  -- UTF-16 units, byte 17; `RATE` on shop.py:5 is character 11, 12, byte 14.
  local enc = me.offset_encoding
  local col = ({ ['utf-16'] = { total = 15, rate = 12, tax_end = 10, rate_end = 20 },
    ['utf-8'] = { total = 17, rate = 14, tax_end = 12, rate_end = 22 } })[enc]
  H.truthy(col, 'agent-lsp negotiated ' .. tostring(enc))
  local main, shop = vim.uri_from_fname(H.dir .. '/main.py'), vim.uri_from_fname(H.dir .. '/shop.py')
  local function range(l1, c1, l2, c2)
    return { start = { line = l1, character = c1 }, ['end'] = { line = l2, character = c2 } }
  end
  local function ask(method, params)
    local result, err = language.answer({ method = method, params = params }, me, H.CEILING)
    H.eq(nil, err, method .. ' error')
    return result
  end
  local function sorted(locations)
    table.sort(locations, function(p, q)
      local a, b = p.range.start, q.range.start
      if p.uri ~= q.uri then return p.uri < q.uri end
      return a.line < b.line or (a.line == b.line and a.character < b.character)
    end)
    return locations
  end

  local expected_refs = {
    { uri = main, range = range(0, 17, 0, 22) },
    { uri = main, range = range(2, col.total, 2, col.total + 5) },
    { uri = main, range = range(3, 4, 3, 9) },  -- the unsaved line
  }
  local declaration = { uri = shop, range = range(0, 4, 0, 9) }
  local with_declaration = vim.list_extend(vim.deepcopy(expected_refs), { declaration })
  local refs_params = { textDocument = { uri = main }, position = { line = 3, character = 4 },
    context = { includeDeclaration = false } }
  -- jedi lists the declaration whatever includeDeclaration says: its definition at the position is left out.
  H.eq(expected_refs, sorted(ask('textDocument/references', refs_params)),
    'references without the declaration: both servers\' answers, each once')
  H.eq(with_declaration, sorted(ask('textDocument/references', vim.tbl_extend('force', refs_params,
    { context = { includeDeclaration = true } }))), 'references with the declaration')
  -- A null inside a list, as decoded JSON holds it (vim.NIL), is copied along.
  H.eq(expected_refs, sorted(ask('textDocument/references', vim.tbl_extend('force', refs_params,
    { workDoneToken = vim.NIL, extra = { vim.NIL } }))), 'references, params with nulls')

  -- As the server's request arrives on 0.11 (in a coroutine, which the answer yields in): the same answer.
  local from_coroutine
  coroutine.wrap(function()
    from_coroutine = { language.answer({ method = 'textDocument/references', params = refs_params }, me, H.CEILING) }
  end)()
  H.wait(H.CEILING, function() return from_coroutine ~= nil end, 'the answer from a coroutine')
  H.eq(expected_refs, sorted(from_coroutine[1]), 'references answered in a coroutine')

  -- A position after the emoji goes to jedi in its encoding, and the definition comes back in agent-lsp's.
  local at_total = { textDocument = { uri = main }, position = { line = 2, character = col.total } }
  H.eq({ { uri = shop, range = range(0, 4, 0, 9) } }, ask('textDocument/definition', at_total), 'definition')
  local hover = ask('textDocument/hover', at_total)
  H.eq(range(2, col.total, 2, col.total + 5), hover.range, 'hover range')
  H.truthy(hover.contents.value:find('def total(prices)', 1, true), 'hover text: ' .. vim.inspect(hover.contents))

  -- shop.py is not open: it is read, jedi is attached to it (it serves the other .py buffer), and answers.
  H.eq(-1, vim.fn.bufnr(H.dir .. '/shop.py'), 'shop.py has no buffer yet')
  local symbols = vim.tbl_map(function(s)
    return { name = s.name, kind = s.kind, range = s.range, selectionRange = s.selectionRange }
  end, ask('textDocument/documentSymbol', { textDocument = { uri = shop } }))
  H.eq({
    { name = 'total', kind = 12, range = range(0, 0, 1, 22), selectionRange = range(0, 4, 0, 9) },
    { name = 'TAX', kind = 13, range = range(4, 0, 4, col.tax_end), selectionRange = range(4, 0, 4, 3) },
    { name = 'RATE', kind = 13, range = range(4, col.rate, 4, col.rate_end),
      selectionRange = range(4, col.rate, 4, col.rate + 4) },
  }, symbols, 'document symbols of a file nobody opened')
  local shop_buf = vim.fn.bufnr(H.dir .. '/shop.py')
  H.eq({ true, true }, { vim.lsp.buf_is_attached(shop_buf, jedi_a.id), vim.lsp.buf_is_attached(shop_buf, jedi_b.id) },
    'jedi attached to shop.py')

  H.eq({ { name = 'total', kind = 12, containerName = 'shop.total', location = { uri = shop, range = range(0, 4, 0, 9) } } },
    ask('workspace/symbol', { query = 'total' }), 'workspace symbols')

  -- jedi renames without a prepareRename: go ahead, as Neovim's own rename does.
  H.eq({ defaultBehavior = true }, ask('textDocument/prepareRename', at_total), 'prepareRename')

  -- jedi has no call hierarchy: nothing answers.
  H.eq(vim.NIL, ask('textDocument/prepareCallHierarchy', at_total), 'a method no server supports')

  local result, err = language.answer({ method = 'textDocument/completion', params = at_total }, me, 1000)
  H.eq({ nil, -32602 }, { result, err.code }, 'an unknown method')
  H.truthy(err.message:find('^method: textDocument/completion is not one this client answers'), err.message)
  result, err = language.answer({ method = 'textDocument/hover', params = { position = at_total.position } }, me, 1000)
  H.eq({ nil, -32602, 'params.textDocument.uri: a string is required' }, { result, err.code, err.message },
    'no textDocument')
  result, err = language.answer({ method = 'textDocument/references', params = vim.tbl_extend('force', refs_params,
    { context = { includeDeclaration = 'no' } }) }, me, 1000)
  H.eq({ nil, -32602, 'params.context.includeDeclaration: a boolean is required' }, { result, err.code, err.message },
    'includeDeclaration not a boolean')
  result, err = language.answer({ method = 'textDocument/references', params = vim.tbl_extend('force', refs_params,
    { context = true }) }, me, 1000)
  H.eq({ nil, -32602, 'params.context: an object is required' }, { result, err.code, err.message },
    'context not an object')

  -- Shapes that need two different servers: one's LocationLink[] beside another's Location[] (Locations), one's
  -- DocumentSymbol[] beside another's SymbolInformation[] (flat).
  local link = { targetUri = shop, targetRange = range(0, 0, 1, 22), targetSelectionRange = range(0, 4, 0, 9) }
  H.eq({ { uri = shop, range = range(0, 4, 0, 9) }, { uri = main, range = range(3, 4, 3, 9) } },
    language._merge('textDocument/definition', { { link }, { uri = main, range = range(3, 4, 3, 9) } }, main),
    'definition: links beside a location')
  H.eq({ link }, language._merge('textDocument/definition', { { link }, { link } }, main), 'links alone stay links')
  local tree = { name = 'Cart', kind = 5, range = range(0, 0, 3, 0), selectionRange = range(0, 6, 0, 10),
    children = { { name = 'add', kind = 6, range = range(1, 4, 2, 0), selectionRange = range(1, 8, 1, 11) } } }
  local info = { name = 'TAX', kind = 13, location = { uri = shop, range = range(4, 0, 4, 3) } }
  H.eq({
    { name = 'Cart', kind = 5, location = { uri = shop, range = range(0, 0, 3, 0) } },
    { name = 'add', kind = 6, containerName = 'Cart', location = { uri = shop, range = range(1, 4, 2, 0) } },
    info,
  }, language._merge('textDocument/documentSymbol', { { tree }, { info } }, shop), 'document symbols, mixed')
  H.eq({ contents = 'second' }, language._merge('textDocument/hover',
    { { contents = { kind = 'markdown', value = '' } }, { contents = 'second' } }, main), 'hover: the first non-empty')

  -- A server that hangs on references, definitions and call hierarchy and fails hover, beside the two jedi.
  local silent = H.language_server({ name = 'silent', cmd = { H.JEDI_VENV .. '/bin/python',
    H.plugin .. '/tests/silent_server.py' } })
  H.eq(true, vim.lsp.buf_is_attached(vim.fn.bufnr(H.dir .. '/main.py'), silent.id), 'silent attached to main.py')
  H.eq(expected_refs, sorted(language.answer({ method = 'textDocument/references', params = refs_params }, me, 2500)),
    'references: jedi\'s less its definition; silent\'s references and definition not waited for past the bound')
  H.eq(with_declaration, sorted(language.answer({ method = 'textDocument/references',
    params = vim.tbl_extend('force', refs_params, { context = { includeDeclaration = true } }) }, me, 2500)),
    'references with the declaration, beside silent')
  H.eq(range(2, col.total, 2, col.total + 5), language.answer({ method = 'textDocument/hover', params = at_total },
    me, 1000).range, 'hover: jedi\'s, beside silent\'s error')
  H.eq({ vim.NIL }, { language.answer({ method = 'textDocument/hover', params = { textDocument = { uri = main },
    position = { line = 1, character = 0 } } }, me, 1000) }, 'hover on an empty line: jedi\'s null, beside silent\'s error')
  result, err = language.answer({ method = 'textDocument/prepareCallHierarchy', params = at_total }, me, 1000)
  H.eq({ nil, -32603, 'textDocument/prepareCallHierarchy failed: silent: no answer within 1000 ms' },
    { result, err.code, err.message }, 'only silent can answer, and does not')
end)
