;;; test.el --- Headless test of instructions-lsp.el with one client  -*- lexical-binding: t; -*-

;; Run by run.sh as `emacs --batch -l test.el' with CLIENT (eglot or lsp-mode), SERVER, FIXTURE,
;; EXPECTED (the CLI's `effective' output for the fixture) and PID_FILE in the environment.  Prints
;; `ok - ...' / `not ok - ...' lines, writes the server's pid to PID_FILE, and exits non-zero when a
;; check failed.

;;; Code:

(require 'cl-lib)
(require 'flymake)
;; What a normal start does: Debian's elpa-* packages (eglot, lsp-mode, markdown-mode) and their
;; autoloads.
(package-initialize)

(defvar test-client (intern (getenv "CLIENT")))
(defvar test-root (file-name-as-directory (getenv "FIXTURE")))
(defvar test-passed 0)
(defvar test-failed 0)

(defun test-out (format-string &rest args)
  (princ (concat (apply #'format format-string args) "\n")))

(defmacro test-check (name &rest body)
  "Run BODY as the check NAME; an error fails it."
  (declare (indent 1))
  `(condition-case err
       (progn ,@body
              (cl-incf test-passed)
              (test-out "ok - %s: %s" test-client ,name))
     (error (cl-incf test-failed)
            (test-out "not ok - %s: %s: %s" test-client ,name (error-message-string err)))))

(defun test-wait (what pred)
  "Wait up to 15 s for PRED, reading the server's output meanwhile."
  (let ((deadline (+ (float-time) 15)))
    (while (not (funcall pred))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun test-file-text (file)
  (with-temp-buffer
    (insert-file-contents-literally file)
    (decode-coding-region (point-min) (point-max) 'utf-8)
    (buffer-string)))

(defun test-cut-diagnostic ()
  "The flymake diagnostic of the current buffer for a file past its budget, or nil."
  (let ((cut (lambda (source code) (and (equal source "instructions") (member code '("truncated" "omitted"))))))
    (pcase test-client
      ;; eglot keeps the LSP diagnostic with its flymake diagnostic.
      ('eglot (cl-find-if (lambda (d)
                            (let ((lsp (cdr (assq 'eglot-lsp-diag (flymake-diagnostic-data d)))))
                              (funcall cut (plist-get lsp :source) (plist-get lsp :code))))
                          (flymake-diagnostics)))
      ;; lsp-mode gives flymake the message alone: find the one of the LSP diagnostic it stored.
      ('lsp-mode (let ((lsp (cl-find-if (lambda (d) (funcall cut (gethash "source" d) (gethash "code" d)))
                                        (lsp--get-buffer-diagnostics))))
                   (and lsp (cl-find (gethash "message" lsp) (flymake-diagnostics)
                                     :key #'flymake-diagnostic-text :test #'equal)))))))

(defun test-server-pid ()
  (pcase test-client
    ('eglot (process-id (jsonrpc--process (eglot-current-server))))
    ('lsp-mode (process-id (lsp--workspace-proc
                            (cl-find 'instructions-lsp (lsp-workspaces)
                                     :key (lambda (w) (lsp--client-server-id (lsp--workspace-client w)))))))))

(require 'instructions-lsp)
(setq instructions-lsp-command (list (getenv "SERVER") "--log-level" "warn")
      ;; The dsh rules, with a budget small enough that the fixture's AGENTS.md is past it (the
      ;; same --set as run.sh's CLI): the default would follow the agents the repository targets.
      instructions-lsp-settings '(:profile "dsh" :baselineMaxBytes 1024 :stateDir nil))

(pcase test-client
  ('eglot
   (require 'eglot)
   (instructions-lsp-eglot-setup))
  ('lsp-mode
   (setq lsp-session-file (expand-file-name "lsp-session" temporary-file-directory)
         lsp-enabled-clients '(instructions-lsp)
         lsp-diagnostics-provider :flymake
         lsp-enable-file-watchers nil
         lsp-headerline-breadcrumb-enable nil
         lsp-modeline-code-actions-enable nil
         lsp-modeline-diagnostics-enable nil
         lsp-lens-enable nil
         lsp-enable-snippet nil
         lsp-restart 'ignore)
   (require 'lsp-mode)
   (instructions-lsp-lsp-mode-setup)
   ;; Importing the project would otherwise be asked interactively.
   (lsp-workspace-folders-add (directory-file-name test-root)))
  (_ (error "CLIENT is eglot or lsp-mode, not %s" test-client)))

(find-file (expand-file-name "AGENTS.md" test-root))

(test-check "the server starts on AGENTS.md"
  (pcase test-client
    ('eglot (call-interactively #'eglot)
            (test-wait "eglot to connect" #'eglot-current-server))
    ('lsp-mode (lsp)
               (test-wait "lsp-mode to connect"
                          (lambda () (and (lsp-workspaces)
                                          (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized))))))
  (let ((pid (test-server-pid)))
    (with-temp-file (getenv "PID_FILE") (insert (number-to-string pid)))))

(test-check "the file past its budget gets a truncated diagnostic from source instructions"
  ;; Flymake starts its first check when the buffer is displayed, which batch mode never does.
  (flymake-start)
  (test-wait "the diagnostic in flymake" #'test-cut-diagnostic)
  (let ((d (test-cut-diagnostic)))
    (unless (memq (flymake-diagnostic-type d) '(:warning eglot-warning))
      (error "Not a warning: %S" (flymake-diagnostic-type d)))))

(defvar test-view nil)

(test-check "instructions-lsp-effective shows the block the CLI prints"
  (setq test-view (instructions-lsp-effective))
  (let ((shown (with-current-buffer test-view (buffer-string)))
        (expected (test-file-text (getenv "EXPECTED"))))
    (unless (string-match-p "past its budget\\|truncated" expected)
      (error "The CLI's block shows no cut: %s" expected))
    ;; The CLI ends its output with one newline; the view holds the blocks alone.
    (unless (string= (concat shown "\n") expected)
      (error "The view differs from the CLI:\n--- view\n%s\n--- CLI\n%s" shown expected))))

(test-check "instructions-lsp-show-view shows what Codex gets, as the CLI prints it"
  ;; The session's budget (baselineMaxBytes) is Codex's too, as `--set` gives it to the CLI.
  (let ((shown (with-current-buffer (instructions-lsp-show-view "codex") (buffer-string)))
        (cli (with-temp-buffer
               (call-process (getenv "SERVER") nil (list t nil) nil "effective" test-root "--profile" "codex"
                             "--set" "baselineMaxBytes=1024")
               (buffer-string))))
    (unless (string-match-p "AGENTS.md instructions for" shown)
      (error "Not Codex's text: %s" shown))
    (unless (string= (concat shown "\n") cli)
      (error "The view differs from the CLI:\n--- view\n%s\n--- CLI\n%s" shown cli))))

(test-check "an agent's lens command, as lsp-mode hands it over, opens the same view"
  ;; (This session shows the dsh rules, so it has no agents' lenses: the command is made as the
  ;; server writes one, in the shape each client reads JSON into.)
  (pcase-let* ((`(,client ,_) (instructions-lsp--client))
               (uri (instructions-lsp--uri client))
               (command (pcase client
                          ('eglot (list :title "Codex" :command "instructions.showView" :arguments (vector uri "codex")))
                          ('lsp-mode (let ((h (make-hash-table :test #'equal)))
                                       (puthash "command" "instructions.showView" h)
                                       (puthash "arguments" (vector uri "codex") h)
                                       h))))
               (shown (with-current-buffer (instructions-lsp--lens-show-view command) (buffer-string))))
    (unless (string-match-p "AGENTS.md instructions for" shown)
      (error "Not Codex's text: %s" shown))))

(test-check "from the view, the commands reach the same server"
  (with-current-buffer test-view
    (let ((again (with-current-buffer (instructions-lsp-effective) (buffer-string))))
      (unless (string= (concat again "\n") (test-file-text (getenv "EXPECTED")))
        (error "The view opened from the view differs from the CLI:\n%s" again)))
    (let ((log (with-current-buffer (instructions-lsp-transitions) (buffer-string))))
      (unless (string-match-p "^## seq 1 · baseline$" log)
        (error "No baseline batch in the transitions:\n%s" log)))))

(test-check "a touch of a deeper file adds its nested block"
  (with-current-buffer (find-file-noselect (expand-file-name "pkg/notes.md" test-root))
    (instructions-lsp-touch))
  (let (log)
    (test-wait "the touch batch"
               (lambda ()
                 (with-current-buffer (find-file-noselect (expand-file-name "AGENTS.md" test-root))
                   (setq log (with-current-buffer (instructions-lsp-transitions) (buffer-string))))
                 (string-match-p "^## seq 2 · touch$" log)))
    (unless (string-match-p "^- set nested pkg/AGENTS.md$" log)
      (error "The touch batch does not set pkg/AGENTS.md:\n%s" log))))

(test-check "the open effective view shows the touch's block without asking (instructions/didChange)"
  (test-wait "the nested block in the view"
             (lambda () (with-current-buffer "*instructions-effective*"
                          (string-match-p "package rules" (buffer-string))))))

(test-check "shutting the server down is answered, with no error reported"
  (let (said)
    (advice-add 'message :before (lambda (format-string &rest args)
                                   (when format-string (push (apply #'format format-string args) said)))
                '((name . test-said)))
    (unwind-protect
        (with-current-buffer (find-file-noselect (expand-file-name "AGENTS.md" test-root))
          (pcase test-client
            ;; eglot signals when the shutdown request fails; lsp-mode reports it as a message.
            ('eglot (eglot-shutdown (eglot-current-server)))
            ('lsp-mode (lsp-workspace-shutdown (lsp-find-workspace 'instructions-lsp buffer-file-name)))))
      (advice-remove 'message 'test-said))
    (when-let ((complaint (cl-find-if (lambda (m) (string-match-p "shutdown request\\|error" m)) said)))
      (error "Shutting down reported: %s" complaint))))

(test-out "%s: %d passed, %d failed" test-client test-passed test-failed)
(kill-emacs (if (> test-failed 0) 1 0))

;;; test.el ends here
