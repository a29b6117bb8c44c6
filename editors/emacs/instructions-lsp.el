;;; instructions-lsp.el --- Which AGENTS.md / CLAUDE.md coding agents load, in Emacs  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, languages

;;; Commentary:

;; A small package for the instructions-lsp language server, with eglot or with lsp-mode (either
;; one; nothing here loads them).  Put this file on the `load-path', then:
;;
;;   (require 'instructions-lsp)
;;   (setq instructions-lsp-settings '(:profile "dsh" :baselineMaxBytes 65536))
;;   ;; eglot: registers the server for `instructions-lsp-major-modes'; then M-x eglot
;;   (with-eval-after-load 'eglot (instructions-lsp-eglot-setup))
;;   ;; or lsp-mode: an add-on client beside the mode's own server; then M-x lsp
;;   (with-eval-after-load 'lsp-mode (instructions-lsp-lsp-mode-setup))
;;
;; The server runs `instructions-lsp-command' over stdio; `instructions-lsp-settings' (the keys of
;; SPEC section 2) are sent as initializationOptions.  Per-project overrides can go in the
;; `instructions' section of workspace/configuration (eglot: `eglot-workspace-configuration').
;; Its diagnostics (source `instructions': `truncated', `omitted', `shadowed', ...) reach flymake
;; (eglot) or lsp-mode's diagnostics like any server's.
;;
;; Commands, through whichever client runs instructions-lsp for the buffer (with eglot, one server
;; per buffer: the buffers of `instructions-lsp-major-modes'):
;;   `instructions-lsp-effective'    the blocks an agent working on this file gets, and the block
;;                                   a touch of this file would add (instructions/effective)
;;   `instructions-lsp-transitions'  the session's batch log (instructions/transitions)
;;   `instructions-lsp-touch'        report this file as read by an agent (instructions/touch)
;;   `instructions-lsp-show-view'    the exact text an agent gets once it reads this file (the
;;                                   command of the server's lenses, which lsp-mode runs here)
;; The views they open remember their server, so the commands work from a view too, and they are
;; shown again when the server says the session changed (instructions/didChange).
;;
;; Before, this file was a snippet to copy: the eglot command was `instructions-lsp-eglot-effective'
;; (now an alias of `instructions-lsp-effective'), the other commands were lsp-mode's only, and the
;; settings were fixed to (:profile "dsh").
;;
;; Tested headless with Emacs 28 (Debian's emacs-nox, elpa-eglot 1.9, elpa-lsp-mode 8.0), each
;; client against the real server: editors/emacs/test/run.sh.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)

(declare-function eglot-current-server "eglot")
(declare-function eglot--path-to-uri "eglot")
(declare-function eglot-path-to-uri "eglot")
(declare-function jsonrpc-request "jsonrpc")
(declare-function jsonrpc-async-request "jsonrpc")
(declare-function jsonrpc-notify "jsonrpc")
(declare-function lsp-request-async "lsp-mode")
(declare-function lsp-notify "lsp-mode")
(declare-function lsp-register-client "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")
(declare-function lsp-find-workspace "lsp-mode")
(declare-function lsp--path-to-uri "lsp-mode")
(defvar eglot-server-programs)
(defvar lsp--cur-workspace)
(defvar lsp-response-timeout)
(defvar lsp-language-id-configuration)

(defgroup instructions-lsp nil
  "Which instruction files (AGENTS.md, CLAUDE.md) coding agents load."
  :group 'tools
  :prefix "instructions-lsp-")

(defcustom instructions-lsp-command '("instructions-lsp")
  "The server program and its arguments; it speaks LSP over stdio."
  :type '(repeat string))

(defcustom instructions-lsp-settings nil
  "Server settings: a plist of the keys of SPEC section 2.
For example (:profile \"dsh\" :baselineMaxBytes 65536); nil keeps the defaults."
  :type 'plist)

(defcustom instructions-lsp-major-modes '(markdown-mode gfm-mode)
  "Major modes whose buffers get the server.
Every file an agent opens is a touch, so adding your languages' modes
makes opening a file reach its nested instruction scopes."
  :type '(repeat symbol))

;;;; Shared

(defvar-local instructions-lsp--origin nil
  "In a view: (CLIENT SERVER URI), where its content came from.")

(defvar-local instructions-lsp--refresh nil
  "In a view: (METHOD PARAMS RENDER), to show it again on `instructions/didChange'.")

(defvar instructions-lsp--refreshing nil
  "Non-nil while a view is shown again: it keeps its window and point.")

(defun instructions-lsp--settings ()
  "The settings as a JSON object (an empty plist would be sent as null)."
  (or instructions-lsp-settings (make-hash-table)))

(defun instructions-lsp--get (object key)
  "KEY of the JSON OBJECT: a plist (eglot) or a hash table (lsp-mode)."
  (if (hash-table-p object)
      (gethash (substring (symbol-name key) 1) object)
    (plist-get object key)))

(defun instructions-lsp-context-text (result)
  "The text of every block of an instructions/effective RESULT.
The blocks are joined as an agent gets them."
  (let ((blocks (cons (instructions-lsp--get result :baseline)
                      (append (instructions-lsp--get result :nested) nil))))
    (string-join (seq-filter (lambda (text) (and (stringp text) (not (string-empty-p text))))
                             (mapcar (lambda (b) (instructions-lsp--get b :rendered)) blocks))
                 "\n\n")))

(defun instructions-lsp--client ()
  "The client of this buffer and its server.
That is (eglot SERVER), (lsp-mode WORKSPACE) or nil."
  (cond
   (instructions-lsp--origin (list (nth 0 instructions-lsp--origin) (nth 1 instructions-lsp--origin)))
   ((and (fboundp 'eglot-current-server) (eglot-current-server))
    (list 'eglot (eglot-current-server)))
   ;; Also in a buffer lsp-mode does not manage: the server of the project's folder.
   ((and (featurep 'lsp-mode) buffer-file-name (lsp-find-workspace 'instructions-lsp buffer-file-name))
    (list 'lsp-mode (lsp-find-workspace 'instructions-lsp buffer-file-name)))))

(defun instructions-lsp--uri (client)
  "The uri the requests of this buffer name, for CLIENT."
  (cond
   (instructions-lsp--origin (nth 2 instructions-lsp--origin))
   ((not buffer-file-name) (user-error "instructions-lsp: this buffer visits no file"))
   ((eq client 'eglot)
    (funcall (if (fboundp 'eglot-path-to-uri) #'eglot-path-to-uri #'eglot--path-to-uri) buffer-file-name))
   (t (lsp--path-to-uri buffer-file-name))))

(defun instructions-lsp--send (client server method params &optional callback)
  "Send METHOD with PARAMS to SERVER of CLIENT.
Without CALLBACK, wait and return the result; with it, return at once and
call CALLBACK with the result (errors are dropped)."
  (pcase client
    ('eglot (let ((method (intern (concat ":" method))))
              (if callback
                  (jsonrpc-async-request server method params :success-fn callback
                                         :error-fn #'ignore :timeout-fn #'ignore)
                (jsonrpc-request server method params))))
    ;; Only this server, also from a view (where lsp-mode is off).
    ('lsp-mode (let ((lsp--cur-workspace server))
                 (if callback
                     (lsp-request-async method params callback :mode 'detached :error-handler #'ignore)
                   (instructions-lsp--lsp-mode-wait method params))))))

(defun instructions-lsp--lsp-mode-wait (method params)
  "Send METHOD with PARAMS through lsp-mode and wait for the result.
Not `lsp-request': lsp-mode 8 throws out of its process filter when the answer
comes, which drops the messages read with it (an `instructions/didChange', say)."
  (let (done result failure)
    (lsp-request-async method params (lambda (r) (setq result r done t))
                       :mode 'detached :error-handler (lambda (e) (setq failure e done t)))
    (with-timeout (lsp-response-timeout (error "instructions-lsp: no answer to %s" method))
      (while (not done)
        (accept-process-output nil 0.05)))
    (when failure
      (error "instructions-lsp: %s: %s" method (instructions-lsp--get failure :message)))
    result))

(defun instructions-lsp--show (name method params render)
  "Ask this buffer's server METHOD, show the answer in the view NAME; return it.
PARAMS is a function of the uri; RENDER makes the text of the result."
  (pcase-let* ((`(,client ,server) (or (instructions-lsp--client)
                                       (user-error "instructions-lsp: no instructions-lsp server for this buffer")))
               (uri (instructions-lsp--uri client))
               (result (instructions-lsp--send client server method (funcall params uri))))
    (instructions-lsp--view name (funcall render result) (list client server uri)
                            (list method params render))))

(defun instructions-lsp--view (name text origin refresh)
  "Show TEXT in the view buffer NAME; return the buffer.
It remembers ORIGIN and REFRESH, the (METHOD PARAMS RENDER) that made it."
  (with-current-buffer (get-buffer-create name)
    (let ((inhibit-read-only t)
          (point (point)))
      (erase-buffer)
      (insert text)
      (goto-char (if instructions-lsp--refreshing (min point (point-max)) (point-min))))
    (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
    (setq instructions-lsp--origin origin
          instructions-lsp--refresh refresh)
    (view-mode 1)
    (unless instructions-lsp--refreshing
      (pop-to-buffer (current-buffer)))
    (current-buffer)))

(defun instructions-lsp--did-change (server)
  "After `instructions/didChange' from SERVER: show its open views again."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when (and instructions-lsp--refresh (eq (nth 1 instructions-lsp--origin) server))
        ;; Asynchronously: this runs in the process filter, and a command may be waiting.
        (pcase-let ((`(,client ,_ ,uri) instructions-lsp--origin)
                    (`(,method ,params ,render) instructions-lsp--refresh)
                    (origin instructions-lsp--origin)
                    (refresh instructions-lsp--refresh)
                    (name (buffer-name)))
          (instructions-lsp--send
           client server method (funcall params uri)
           (lambda (result)
             (when (buffer-live-p buffer)
               (let ((instructions-lsp--refreshing t))
                 (instructions-lsp--view name (funcall render result) origin refresh))))))))))

;;;; Commands

(defun instructions-lsp--effective-text (result)
  "The text of the effective view for RESULT: the blocks, then the preview."
  (let* ((text (instructions-lsp-context-text result))
         (preview (instructions-lsp--get result :preview))
         (preview-text (and preview (instructions-lsp--get preview :rendered))))
    (if (and (stringp preview-text) (not (string-empty-p preview-text)))
        (concat text "\n\n<!-- preview: what a touch of this file adds -->\n\n" preview-text)
      text)))

(defun instructions-lsp-effective ()
  "Show the instruction blocks an agent working on this file gets.
Then the block a touch of this file would add, if any."
  (interactive)
  (instructions-lsp--show "*instructions-effective*" "instructions/effective"
                          (lambda (uri) (list :uri uri)) #'instructions-lsp--effective-text))

(defun instructions-lsp--transitions-text (result)
  "The text of the transitions view for RESULT: one section per batch."
  (let ((text (format "# Transitions of %s (seq %s)\n\n" (instructions-lsp--get result :folder)
                      (instructions-lsp--get result :seq))))
    (seq-doseq (b (instructions-lsp--get result :batches))
      (setq text (concat text (format "## seq %s · %s\n\n" (instructions-lsp--get b :seq)
                                      (instructions-lsp--get b :reason))))
      (seq-doseq (c (instructions-lsp--get b :changes))
        (setq text (concat text (format "- %s %s %s\n" (instructions-lsp--get c :action)
                                        (instructions-lsp--get c :scope) (instructions-lsp--get c :path)))))
      (setq text (concat text "\n" (instructions-lsp--get b :text) "\n\n")))
    text))

(defun instructions-lsp-transitions (&optional since)
  "Show the transition log of this file's session.
Only the batches after SINCE (a prefix argument) when given."
  (interactive "P")
  (let ((since (prefix-numeric-value (or since 0))))
    (instructions-lsp--show "*instructions-transitions*" "instructions/transitions"
                            (lambda (uri) (list :uri uri :since since)) #'instructions-lsp--transitions-text)))

(defun instructions-lsp-touch ()
  "Report the current file as read by an agent (instructions/touch)."
  (interactive)
  (pcase-let* ((`(,client ,server) (or (instructions-lsp--client)
                                       (user-error "instructions-lsp: no instructions-lsp server for this buffer")))
               (params (list :uri (instructions-lsp--uri client) :kind "read")))
    (pcase client
      ('eglot (jsonrpc-notify server :instructions/touch params))
      ('lsp-mode (let ((lsp--cur-workspace server))
                   (lsp-notify "instructions/touch" params))))))

;; An agent's view: what it gets once it reads this file, as the server's lenses open it.

(defconst instructions-lsp-agents '("codex" "claude" "gemini" "opencode" "dsh-next" "copilot" "cursor")
  "The agents `instructions-lsp-show-view' offers.")

(defun instructions-lsp-show-view (agent)
  "Show the exact text AGENT gets once it reads this file (instructions.showView)."
  (interactive (list (completing-read "Agent: " instructions-lsp-agents nil t)))
  (instructions-lsp--show (format "*instructions: %s*" agent) "workspace/executeCommand"
                          (lambda (uri) (list :command "instructions.showView" :arguments (vector uri agent)))
                          (lambda (result) (instructions-lsp--get result :text))))

(defun instructions-lsp--lens-show-view (command)
  "Run the server's lens COMMAND `instructions.showView' (lsp-mode's action handler)."
  (let ((arguments (instructions-lsp--get command :arguments)))
    (instructions-lsp-show-view (elt arguments 1))))

;;;; eglot

(define-obsolete-function-alias 'instructions-lsp-eglot-effective #'instructions-lsp-effective "0.1.0")

(defun instructions-lsp--eglot-contact (&optional _interactive)
  "The eglot contact: the command, with the settings as initializationOptions."
  (append instructions-lsp-command
          (list :initializationOptions (instructions-lsp--settings))))

;;;###autoload
(defun instructions-lsp-eglot-setup ()
  "Make eglot run instructions-lsp in `instructions-lsp-major-modes'."
  (require 'eglot)
  (add-to-list 'eglot-server-programs
               (cons instructions-lsp-major-modes #'instructions-lsp--eglot-contact))
  (cl-defmethod eglot-handle-notification (server (_method (eql 'instructions/didChange)) &rest _)
    (instructions-lsp--did-change server)))

;;;; lsp-mode

(defun instructions-lsp--language-id (buffer)
  "The languageId of BUFFER for lsp-mode.
Without lsp-mode's warning for the modes it does not know."
  (with-current-buffer buffer
    (cond ((derived-mode-p 'markdown-mode) "markdown")
          ((cdr (assq major-mode lsp-language-id-configuration)))
          (t "plaintext"))))

;;;###autoload
(defun instructions-lsp-lsp-mode-setup ()
  "Register instructions-lsp with lsp-mode.
It is an add-on: it runs beside each mode's own server."
  (require 'lsp-mode)
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection (lambda () instructions-lsp-command))
    :activation-fn (lambda (&rest _) (apply #'derived-mode-p instructions-lsp-major-modes))
    :language-id #'instructions-lsp--language-id
    :server-id 'instructions-lsp
    :add-on? t
    :initialization-options #'instructions-lsp--settings
    :action-handlers (let ((handlers (make-hash-table :test #'equal)))
                       (puthash "instructions.showView" #'instructions-lsp--lens-show-view handlers)
                       handlers)
    :notification-handlers (let ((handlers (make-hash-table :test #'equal)))
                             (puthash "instructions/didChange"
                                      (lambda (workspace _params) (instructions-lsp--did-change workspace))
                                      handlers)
                             handlers))))

(provide 'instructions-lsp)
;;; instructions-lsp.el ends here
