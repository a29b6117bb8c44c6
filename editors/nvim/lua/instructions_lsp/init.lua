-- instructions-lsp for Neovim: attaches the server to every file buffer under a project root
-- (every opened file is a touch), and offers :InstructionsEffective, :InstructionsTransitions,
-- :InstructionsCompare, :InstructionsCopy and a statusline function.
--
--   require('instructions_lsp').setup{ cmd = { 'instructions-lsp' }, profile = 'ds4', baselineMaxBytes = 32768 }
--
-- Works on Neovim 0.7 (vim.lsp.start_client / buf_attach_client) and on 0.10 and later
-- (vim.lsp.config / vim.lsp.start where they exist).

local M = {}

-- Every setting of the server (docs/settings.md).
M.setting_keys = {
  'profile', 'instructionFileCandidates', 'localInstructionFileCandidates', 'dshHome',
  'globalInstructionFile', 'projectRootMarkers', 'baselineMaxBytes', 'maxFileBytes', 'frame',
  'symlinks', 'dedupeTrimmed', 'watch', 'stateDir', 'profiles',
}

local defaults = {
  cmd = { 'instructions-lsp' },
  -- Appended to the statusline text when a block omits or truncates anything.
  cut_mark = ' ✂',
  -- Server settings; any key of M.setting_keys may also be given at the top level.
  settings = {},
}

local state = {
  opts = nil,
  clients = {}, -- root -> client id
  status = {}, -- root -> { text = '12.3/64 KiB', cut = bool }
  generation = {}, -- root -> the number of the newest status request
  augroup = nil,
}

local uv = vim.loop

local function notify(msg, level)
  vim.notify('instructions-lsp: ' .. msg, level or vim.log.levels.WARN)
end

local function is_dir(path)
  local stat = uv.fs_stat(path)
  return stat ~= nil and stat.type == 'directory'
end

local function exists(path)
  return uv.fs_lstat(path) ~= nil
end

local function dirname(path)
  return vim.fn.fnamemodify(path, ':h')
end

--- The nearest ancestor-or-self of `dir` holding a root marker; `dir` itself when none does.
function M.find_root(dir)
  local markers = state.opts.settings.projectRootMarkers or { '.git' }
  local current = dir
  while true do
    for _, m in ipairs(markers) do
      if exists(current .. '/' .. m) then
        return current
      end
    end
    local parent = dirname(current)
    if parent == current then
      return dir
    end
    current = parent
  end
end

local function kib(bytes)
  local text = string.format('%.1f', bytes / 1024)
  return (text:gsub('%.0$', ''))
end

--- Text of every block of an `instructions/effective` result, as an agent gets them.
function M.context_text(result)
  local blocks = {}
  for _, block in ipairs({ result.baseline, unpack(result.nested or {}) }) do
    if block.rendered and block.rendered ~= '' then
      table.insert(blocks, block.rendered)
    end
  end
  return table.concat(blocks, '\n\n')
end

--- "600 B", "1.2 KiB".
local function size(bytes)
  if bytes < 1024 then
    return bytes .. ' B'
  end
  return kib(bytes) .. ' KiB'
end

--- "1234 tokens", or "~1234 tokens (estimate)" for an agent whose tokenizer is not o200k_base;
--- '' when the answer has no count. `short`: "~1234" (a column).
local function tokens(t, short)
  if type(t) ~= 'table' then
    return ''
  end
  local mark = t.exact and '' or '~'
  if short then
    return mark .. t.count
  end
  return mark .. t.count .. ' tokens' .. (t.exact and '' or ' (estimate)')
end

--- The statusline of the agents a `profile = "targets"` answer shows: e.g.
--- `Codex 31.9 KiB · Claude Code 476 B`, and whether any of them cuts a file.
function M.agents_status(result)
  local parts, cut, cutting = {}, false, {}
  for _, p in ipairs(result.profiles) do
    table.insert(parts, (p.name or p.profile) .. ' ' .. size(p.bytes))
    local cuts = false
    for _, f in ipairs(p.files) do
      cuts = cuts or f.status == 'truncated' or f.status == 'omitted'
    end
    if cuts then
      table.insert(cutting, p.name or p.profile)
    end
    cut = cut or cuts
  end
  -- Past three agents the figures would not fit: how many, and which cut a file.
  local text = table.concat(parts, ' · ')
  if #parts > 3 then
    text = #parts .. ' agents' .. (#cutting > 0 and (' · ' .. table.concat(cutting, ', ') .. ' cut') or ' · none cut')
  end
  return { text = text, cut = cut }
end

--- How the server heads a profile's answer, as `effective` and `compare` do ("Codex CLI 0.171.0
--- (codex)"); its release when an older server gives none.
local function heading(p)
  return p.headline or string.format('%s (%s)', p.name or p.profile, p.mirrors)
end

--- :InstructionsEffective for the agents: each agent's text as it gets it, then the blocks this
--- server hands an agent that asks it (`engine`, an `instructions/effective` result).
function M.agents_text(result, engine)
  local parts = {}
  for _, p in ipairs(result.profiles) do
    if p.nothing and p.text == '' then
      table.insert(parts, string.format('<!-- %s: loads nothing here: %s -->', heading(p), p.nothing))
    else
      local size = p.bytes .. ' bytes' .. (p.tokens and (', ' .. tokens(p.tokens)) or '')
      table.insert(parts, string.format('<!-- %s: %s -->\n\n%s', heading(p), size, p.text))
    end
  end
  local served = engine and M.context_text(engine) or ''
  if served ~= '' then
    table.insert(parts, '<!-- Served blocks: what this server hands an agent that asks it -->\n\n' .. served)
  end
  return table.concat(parts, '\n\n')
end

local function status_of(result)
  local total = result.baseline.bytes
  local cut = #result.baseline.omitted > 0 or #result.baseline.truncated > 0
  for _, block in ipairs(result.nested or {}) do
    total = total + block.bytes
    cut = cut or #block.omitted > 0 or #block.truncated > 0
  end
  local budget = result.budgetBytes > 0 and kib(result.budgetBytes) or 'off'
  return { text = kib(total) .. '/' .. budget .. ' KiB', cut = cut }
end

local function client_of(root)
  local id = state.clients[root]
  if id == nil then
    return nil
  end
  local client = vim.lsp.get_client_by_id(id)
  if client == nil or (client.is_stopped and client.is_stopped()) then
    return nil
  end
  return client
end

--- Asks the server of `root` for the session's state and caches the statusline text: what
--- reaches each agent the repository targets, or, with the `profile` setting, the engine's
--- blocks against their budget.
function M.refresh(root)
  local client = client_of(root)
  if not client then
    return
  end
  local uri = vim.uri_from_fname(root)
  -- Answers may come back out of order: only the newest request's answer is shown, so a slow
  -- answer to an older request never puts back a status the session has moved past.
  local generation = (state.generation[root] or 0) + 1
  state.generation[root] = generation
  local function show(status)
    if state.generation[root] ~= generation then
      return
    end
    state.status[root] = status
    vim.schedule(function()
      vim.cmd('redrawstatus!')
    end)
  end
  client.request('instructions/effective', { uri = uri, profile = 'targets' }, function(err, result)
    if not err and result and result.view == 'agents' then
      return show(M.agents_status(result))
    end
    client.request('instructions/effective', { uri = uri }, function(err2, engine)
      if not err2 and engine then
        show(status_of(engine))
      end
    end)
  end)
end

local function root_of_buf(bufnr)
  -- The plugin's scratch views belong to the project they were opened from.
  local ok, remembered = pcall(vim.api.nvim_buf_get_var, bufnr, 'instructions_lsp_root')
  if ok and type(remembered) == 'string' then
    return remembered
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  local dir = is_dir(name) and name or dirname(name)
  for root, _ in pairs(state.clients) do
    if name:sub(1, #root + 1) == root .. '/' then
      return root
    end
  end
  return M.find_root(dir)
end

local function client_config(root)
  local settings = state.opts.settings
  return {
    name = 'instructions-lsp',
    cmd = state.opts.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = settings,
    settings = { instructions = settings },
    handlers = {
      ['instructions/didChange'] = function()
        M.refresh(root)
      end,
    },
    -- An agent's lens (vim.lsp.codelens.run()) opens that agent's exact text, which the
    -- server answers with.
    commands = {
      ['instructions.showView'] = function(command, ctx)
        local client = vim.lsp.get_client_by_id(ctx.client_id)
        if client == nil then
          return
        end
        local params = { command = command.command, arguments = command.arguments }
        client.request('workspace/executeCommand', params, function(err, result)
          if err then
            notify('instructions.showView: ' .. (err.message or vim.inspect(err)))
          elseif result and result.text then
            M.show_view(result, root)
          end
        end, ctx.bufnr)
      end,
    },
    on_init = function()
      M.refresh(root)
    end,
    flags = { exit_timeout = 1000 },
  }
end

--- Attaches the server of the buffer's project root (starting it on first use).
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' then
    return
  end
  local root = root_of_buf(bufnr)
  if root == nil then
    return
  end
  local client = client_of(root)
  if client then
    if not vim.lsp.buf_is_attached(bufnr, client.id) then
      vim.lsp.buf_attach_client(bufnr, client.id)
    end
    return
  end
  local config = client_config(root)
  local id
  if vim.lsp.start then
    if type(vim.lsp.config) == 'function' or (type(vim.lsp.config) == 'table' and getmetatable(vim.lsp.config)) then
      pcall(vim.lsp.config, 'instructions_lsp', { cmd = config.cmd, settings = config.settings, init_options = config.init_options })
    end
    id = vim.lsp.start(config, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(config)
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if id == nil then
    notify('could not start ' .. table.concat(state.opts.cmd, ' '), vim.log.levels.ERROR)
    return
  end
  state.clients[root] = id
end

local function current()
  local bufnr = vim.api.nvim_get_current_buf()
  local root = root_of_buf(bufnr)
  local client = root and client_of(root)
  if not client then
    notify('no instructions-lsp server for this buffer')
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local uri = (name ~= '' and vim.bo[bufnr].buftype == '') and vim.uri_from_fname(name) or vim.uri_from_fname(root)
  return client, uri, root
end

local function request(method, params)
  local client = current()
  if not client then
    return nil
  end
  local response = client.request_sync(method, params, 5000, 0)
  if not response then
    notify(method .. ': no answer')
    return nil
  end
  if response.err then
    notify(method .. ': ' .. (response.err.message or vim.inspect(response.err)))
    return nil
  end
  return response.result
end

local function scratch(name, text, filetype, root)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  -- Remembered so that the commands and the statusline work from this view too.
  vim.api.nvim_buf_set_var(buf, 'instructions_lsp_root', root)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  return buf
end

--- Shows an agent's view (the answer of `instructions.showView`) in a scratch buffer.
function M.show_view(result, root)
  return scratch(result.title .. '.md', result.text, 'markdown', root)
end

--- The `instructions/effective` result for the current buffer, or nil (after a message).
local function effective_here()
  local _, uri, root = current()
  if not uri then
    return nil
  end
  return request('instructions/effective', { uri = uri }), root
end

--- :InstructionsEffective: what each agent the repository targets gets here (as if it had read
--- the current file), then the blocks of the session; with the `profile` setting, the
--- session's blocks and the preview of the current file.
function M.show_effective()
  local result, root = effective_here()
  if not result then
    return
  end
  local _, uri = current()
  local targets = request('instructions/effective', { uri = uri, profile = 'targets', tokens = true })
  local text
  if targets and targets.view == 'agents' then
    text = M.agents_text(targets, result)
  else
    text = M.context_text(result)
    if result.preview ~= vim.NIL and result.preview and result.preview.rendered ~= '' then
      text = text .. '\n\n<!-- preview: what a touch of this file adds -->\n\n' .. result.preview.rendered
    end
  end
  return scratch('instructions://effective', text, 'markdown', root)
end

--- :InstructionsTransitions: the session's batch log, oldest first.
function M.show_transitions()
  local _, uri, root = current()
  if not uri then
    return
  end
  local result = request('instructions/transitions', { uri = uri, since = 0 })
  if not result then
    return
  end
  local lines = { '# Transitions of ' .. result.folder .. ' (seq ' .. result.seq .. ')', '' }
  for _, batch in ipairs(result.batches) do
    table.insert(lines, string.format('## seq %d · %s', batch.seq, batch.reason))
    table.insert(lines, '')
    for _, c in ipairs(batch.changes) do
      local digest = c.sha256 ~= vim.NIL and c.sha256 and (' ' .. c.sha256:sub(1, 12)) or ''
      table.insert(lines, string.format('- %s %s %s%s', c.action, c.scope, c.path, digest))
    end
    table.insert(lines, '')
    table.insert(lines, batch.text)
    table.insert(lines, '')
  end
  return scratch('instructions://transitions', table.concat(lines, '\n'), 'markdown', root)
end

--- The lines of the :InstructionsCompare table: a row per profile, then each profile's files.
function M.compare_lines(result)
  local list = function(t)
    return #t > 0 and table.concat(t, ', ') or '-'
  end
  local lines = {
    '# What each agent loads in ' .. vim.uri_to_fname(result.folder),
    '',
  }
  if type(result.selectedBecause) == 'string' then
    table.insert(lines, result.selectedBecause)
    table.insert(lines, '')
  end
  table.insert(lines, string.format('%-9s %8s %8s  %-6s %s', 'profile', 'bytes', 'tokens', 'files', 'cut'))
  for _, p in ipairs(result.profiles) do
    local reaching, cut = 0, {}
    for _, f in ipairs(p.files) do
      if f.status == 'loaded' or f.status == 'truncated' then
        reaching = reaching + 1
      end
      if f.status == 'truncated' or f.status == 'omitted' then
        table.insert(cut, f.path)
      end
    end
    table.insert(lines, string.format('%-9s %8d %8s  %-6d %s', p.profile, p.bytes, tokens(p.tokens, true), reaching, list(cut)))
  end
  for _, p in ipairs(result.profiles) do
    table.insert(lines, '')
    table.insert(lines, '## ' .. heading(p))
    if p.nothing and p.text == '' then
      table.insert(lines, 'Loads nothing here: ' .. p.nothing)
    end
    for _, f in ipairs(p.files) do
      local by = (f.by ~= nil and f.by ~= vim.NIL) and (' by ' .. f.by) or ''
      table.insert(lines, string.format('- %s %s%s, %s, %d of %d bytes', f.path, f.status, by, f.scope, f.includedBytes, f.bytes))
    end
  end
  return lines
end

--- :InstructionsCompare [all]: what each agent the repository targets (its
--- instructions-lsp.toml, else what its files show) loads in this folder; with `all`, every
--- profile (dsh, ds4 and every agent).
function M.show_compare(opts)
  local _, _, root = current()
  if not root then
    return
  end
  local which = (opts and opts.args == 'all') and 'all' or 'targets'
  local result = request('instructions/effective', { uri = vim.uri_from_fname(root), profile = which, tokens = true })
  if not result then
    return
  end
  return scratch('instructions://compare', table.concat(M.compare_lines(result), '\n'), 'markdown', root)
end

--- :InstructionsCopy [register]: the blocks into a register (default `"`, and `+` when there is
--- a clipboard).
function M.copy(register)
  local result = effective_here()
  if not result then
    return
  end
  local text = M.context_text(result)
  if register and register ~= '' then
    vim.fn.setreg(register, text)
  else
    vim.fn.setreg('"', text)
    if vim.fn.has('clipboard') == 1 then
      vim.fn.setreg('+', text)
    end
  end
  vim.notify(string.format('instructions-lsp: copied %d bytes of agent context', #text))
  return text
end

--- For the statusline: e.g. `Codex 1.2 KiB · Claude Code 476 B` (the agents the repository
--- targets; `12.3/64 KiB` of the session's blocks with the `profile` setting), with the cut mark
--- when anything is cut; empty when the buffer has no session.
function M.statusline()
  local root = root_of_buf(vim.api.nvim_get_current_buf())
  local s = root and state.status[root]
  if not s then
    return ''
  end
  return s.text .. (s.cut and state.opts.cut_mark or '')
end

function M.setup(opts)
  opts = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  local known = { cmd = true, cut_mark = true, settings = true }
  for _, key in ipairs(M.setting_keys) do
    known[key] = true
    if opts[key] ~= nil then
      opts.settings[key] = opts[key]
      opts[key] = nil
    end
  end
  for key, _ in pairs(opts) do
    if not known[key] then
      notify('unknown option `' .. key .. '`; options are cmd, cut_mark, settings and ' .. table.concat(M.setting_keys, ', '))
    end
  end
  if type(opts.cmd) == 'string' then
    opts.cmd = { opts.cmd }
  end
  state.opts = opts
  state.augroup = vim.api.nvim_create_augroup('instructions_lsp', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = state.augroup,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'BufWritePost' }, {
    group = state.augroup,
    callback = function(args)
      local root = root_of_buf(args.buf)
      if root then
        M.refresh(root)
      end
    end,
  })
  vim.api.nvim_create_user_command('InstructionsEffective', M.show_effective, { desc = 'Show the instruction blocks agents get here' })
  vim.api.nvim_create_user_command('InstructionsTransitions', M.show_transitions, { desc = 'Show the instruction transition log' })
  vim.api.nvim_create_user_command(
    'InstructionsCompare',
    M.show_compare,
    { nargs = '?', complete = function() return { 'all' } end, desc = 'Compare what each agent loads here' }
  )
  vim.api.nvim_create_user_command('InstructionsCopy', function(a)
    M.copy(a.args)
  end, { nargs = '?', desc = 'Copy the instruction blocks into a register' })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

return M
