-- Headless test of the plugin against a fixture tree (see run.sh). Prints `ok - …` lines and
-- `nvim: N passed, N failed`, writes the server's pid to $PID_FILE, then quits.
local root = os.getenv('FIXTURE')
local bin = os.getenv('SERVER')
local pid_file = os.getenv('PID_FILE')
local passed, failed = 0, 0

local function out(line)
  io.stdout:write(line .. '\n')
end

local function check(name, fn)
  local ok, err = pcall(fn)
  -- A failed check may leave a scratch window open: later checks start from one window.
  pcall(vim.cmd, 'only')
  if vim.bo.buftype == 'nofile' then
    pcall(vim.cmd, 'bwipeout!')
  end
  if ok then
    passed = passed + 1
    out('ok - ' .. name)
  else
    failed = failed + 1
    out('not ok - ' .. name .. ': ' .. tostring(err))
  end
end

local function wait(what, pred)
  if not vim.wait(15000, pred, 50) then
    error('timed out waiting for ' .. what)
  end
end

local il = require('instructions_lsp')
il.setup({ cmd = { bin, '--log-level', 'warn' }, stateDir = vim.NIL })

check('CLAUDE.md beside AGENTS.md gets the diagnostic of the agent that ignores it', function()
  vim.cmd('edit ' .. root .. '/CLAUDE.md')
  local buf = vim.api.nvim_get_current_buf()
  -- The repository targets Codex, Claude Code and opencode (its files show them): opencode
  -- loads AGENTS.md and ignores CLAUDE.md; the dsh rules are not the default.
  wait('the agentIgnored diagnostic', function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == 'agentIgnored' then
        return true
      end
    end
    return false
  end)
  local d = vim.diagnostic.get(buf)[1]
  assert(d.severity == vim.diagnostic.severity.INFO, 'information')
  assert(d.message:find('opencode ignores this file: it loads AGENTS.md instead', 1, true), d.message)
  for _, x in ipairs(vim.diagnostic.get(buf)) do
    assert(x.code ~= 'shadowed', 'no dsh finding by default')
  end
  local client = vim.lsp.get_active_clients()[1]
  local f = io.open(pid_file, 'w')
  f:write(tostring(client.rpc.pid))
  f:close()
end)

check('an import typed without saving is flagged at once, and one that names a file is followed', function()
  vim.o.hidden = true
  vim.cmd('edit ' .. root .. '/CLAUDE.md')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'Also read @docs/nope.md and @docs/guide.md' })
  local function missing()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == 'missingImport' then
        return d
      end
    end
  end
  wait('the missingImport diagnostic of the unsaved line', function()
    return missing() ~= nil
  end)
  local d = missing()
  assert(d.lnum == 1 and d.col == 10, 'at the mention: ' .. d.lnum .. ':' .. d.col)
  assert(d.message:find('`@docs/nope.md` names no file: Claude Code', 1, true), d.message)
  assert(vim.bo[buf].modified, 'nothing was saved')
  -- Go to definition on the import that names a file.
  vim.api.nvim_win_set_cursor(0, { 2, 32 })
  vim.lsp.buf.definition()
  wait('the imported file', function()
    return vim.api.nvim_buf_get_name(0):sub(-#'docs/guide.md') == 'docs/guide.md'
  end)
  vim.cmd('edit! ' .. root .. '/CLAUDE.md')
  vim.cmd('edit!')
end)

check(':InstructionsEffective shows what each targeted agent gets, as the CLI prints it', function()
  vim.cmd('InstructionsEffective')
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.bo[buf].filetype == 'markdown', 'filetype markdown')
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  -- Codex first (the repository holds AGENTS.md and CLAUDE.md), its text as `effective` prints it.
  local codex = vim.fn.system({ bin, 'effective', root, '--profile', 'codex' }):gsub('\n$', '')
  -- Each agent headed as `effective` heads it: its release as a person says it, and its profile.
  local head = text:match('^<!%-%- Codex CLI [%d.]+ %(codex%): %d+ bytes, %d+ tokens %-%->\n\n')
  assert(head, 'a Codex heading first:\n' .. text)
  assert(text:sub(#head + 1, #head + #codex) == codex, 'then the CLI text:\n' .. text)
  assert(text:find('<!-- Claude Code 2.', 1, true) and text:find('<!-- opencode 1.', 1, true), text)
  assert(not text:find('mirrors', 1, true), 'no profile headed by its raw `mirrors`: ' .. text)
  assert(text:find(' tokens (estimate) -->', 1, true), 'an estimate for Claude Code and opencode: ' .. text)
  -- Then the served blocks: the session's, as `effective` prints them.
  local served = vim.fn.system({ bin, 'effective', root, '--profile', 'dsh', '--set', 'stateDir=null' }):gsub('\n$', '')
  assert(text:find('<!-- Served blocks: what this server hands an agent that asks it -->\n\n' .. served, 1, true), text)
  vim.cmd('close')
end)

check(':InstructionsCompare shows the agents the repository targets, counted as the CLI counts them', function()
  -- The line that says which agents goes to stderr; only the JSON is read here.
  local rows = vim.fn.json_decode(vim.fn.system(vim.fn.shellescape(bin) .. ' compare ' .. vim.fn.shellescape(root) .. ' --json 2>/dev/null'))
  assert(#rows == 3, 'Codex, Claude Code and opencode, detected from AGENTS.md and CLAUDE.md')
  vim.cmd('InstructionsCompare')
  local buf = vim.api.nvim_get_current_buf()
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  for _, r in ipairs(rows) do
    -- The dsh rows join their blocks differently; the agents' texts are the same bytes.
    if r.profile ~= 'dsh' and r.profile ~= 'ds4' then
      local row = string.format('\n%-9s %8d %8s ', r.profile, r.bytes, (r.tokens.exact and '' or '~') .. r.tokens.count)
      assert(text:find(row, 1, true), 'a row for ' .. r.profile .. ' with ' .. r.bytes .. ' bytes:\n' .. text)
    end
  end
  assert(text:find('\n## opencode 1.18.33 (opencode)\n', 1, true), text)
  assert(text:find('- CLAUDE.md shadowed by AGENTS.md', 1, true), text)
  -- A shadowed file is shown with its size, though no agent reads it.
  assert(text:find('- AGENTS.md shadowed by CLAUDE.md, project, 0 of 10 bytes', 1, true), text)
  assert(text:find('showing for Codex, Claude Code, opencode: detected from AGENTS.md, CLAUDE.md', 1, true), text)
  assert(not text:find('(dsh-next)', 1, true), 'only the targeted agents: ' .. text)
  vim.cmd('close')
  vim.cmd('InstructionsCompare all')
  local all = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_get_current_buf(), 0, -1, false), '\n')
  assert(all:find('\n## DeepSeek Harness (next), dsh-agent-instructions ', 1, true), 'every profile with `all`: ' .. all)
  vim.cmd('close')
end)

check('the scratch views keep their project: the commands and the statusline work from them', function()
  wait('a first status', function()
    return il.statusline() ~= ''
  end)
  local status = il.statusline()
  vim.cmd('InstructionsEffective')
  local view = vim.api.nvim_get_current_buf()
  assert(il.statusline() == status, 'the statusline of the view: ' .. il.statusline())
  vim.cmd('InstructionsEffective')
  local again = vim.api.nvim_get_current_buf()
  assert(again ~= view, ':InstructionsEffective opened nothing from the view')
  local text = table.concat(vim.api.nvim_buf_get_lines(again, 0, -1, false), '\n')
  assert(text:find('## AGENTS.md\n\nroot rules', 1, true), text)
  vim.cmd('InstructionsTransitions')
  text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  assert(text:find('## seq 1 · baseline', 1, true), text)
end)

check('a deeper file adds the nested file to the statusline and the transitions', function()
  wait('a first status', function()
    return il.statusline() ~= ''
  end)
  local before = il.statusline()
  local agents = '^Codex [%d.]+ K?i?B · Claude Code [%d.]+ K?i?B · opencode [%d.]+ K?i?B$'
  assert(before:match(agents), before)
  vim.cmd('edit ' .. root .. '/pkg/deep/main.lua')
  wait('the statusline to grow', function()
    return il.statusline() ~= before
  end)
  assert(il.statusline():match(agents), il.statusline())
  vim.cmd('InstructionsTransitions')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  assert(text:find('## seq 2 · touch', 1, true), text)
  assert(text:find('- set nested pkg/deep/AGENTS.md', 1, true), text)
  vim.cmd('close')
end)

check("a source file's lens opens the view of the agent that reads it", function()
  vim.cmd('edit ' .. root .. '/pkg/deep/main.lua')
  local buf = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_active_clients()[1]
  local answer = client.request_sync('textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 10000, buf)
  assert(answer and answer.result, 'lenses: ' .. vim.inspect(answer))
  local lens
  for _, l in ipairs(answer.result) do
    if l.command.title:find('^Codex: ') then
      lens = l
    end
  end
  assert(lens, 'a Codex lens: ' .. vim.inspect(answer.result))
  assert(lens.command.command == 'instructions.showView', lens.command.command)
  -- Run as a lens is run: the client's own command handler asks the server and shows the text.
  local handler = client.commands['instructions.showView']
  assert(handler, 'the plugin handles instructions.showView')
  handler(lens.command, { client_id = client.id, bufnr = buf })
  wait('the view', function()
    return vim.api.nvim_buf_get_name(0):find('Codex in', 1, true) ~= nil
      or vim.api.nvim_buf_get_name(0):find('Codex reading', 1, true) ~= nil
  end)
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  assert(text:find('root rules', 1, true), text)
  assert(vim.bo.filetype == 'markdown', vim.bo.filetype)
  vim.cmd('close')
end)

check('a change on disk refreshes the status', function()
  local before = il.statusline()
  local f = io.open(root .. '/AGENTS.md', 'w')
  f:write(string.rep('root rules, now much longer. ', 4000))
  f:close()
  wait('the cut mark', function()
    return il.statusline() ~= before and il.statusline():find('✂', 1, true) ~= nil
  end)
  -- The status reads the disk at once; the change batch follows the watcher's debounce.
  local text = ''
  wait('the change batch in the transitions', function()
    vim.cmd('InstructionsTransitions')
    text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    vim.cmd('close')
    return text:find('· change', 1, true) ~= nil
  end)
end)

check(':InstructionsCopy puts the block in a register', function()
  vim.fn.setreg('a', '')
  vim.cmd('InstructionsCopy a')
  local copied = vim.fn.getreg('a')
  assert(copied:find('<workspace-context', 1, true), copied)
end)

out(string.format('nvim: %d passed, %d failed', passed, failed))
if failed > 0 then
  vim.cmd('cquit 1')
else
  vim.cmd('qa!')
end
