;;; instructions-lsp.el --- instructions-lsp for Emacs (eglot or lsp-mode)  -*- lexical-binding: t; -*-

;; Copy what you use into your init file. Both clients run `instructions-lsp` over stdio; the
;; settings are those of SPEC section 2 (initializationOptions, or the `instructions' section of
;; workspace/configuration).

;;;; eglot (built into Emacs 29)

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((markdown-mode gfm-mode) . ("instructions-lsp" :initializationOptions (:profile "dsh")))))

(defun instructions-lsp-eglot-effective ()
  "Show the instruction blocks an agent working on this file gets (eglot)."
  (interactive)
  (let* ((server (eglot-current-server))
         (result (jsonrpc-request server :instructions/effective
                                  `(:uri ,(eglot--path-to-uri (buffer-file-name)))))
         (baseline (plist-get result :baseline)))
    (with-current-buffer (get-buffer-create "*instructions-effective*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (plist-get baseline :rendered))
        (mapc (lambda (b) (insert "\n\n" (plist-get b :rendered))) (plist-get result :nested)))
      (when (fboundp 'markdown-mode) (markdown-mode))
      (view-mode 1)
      (pop-to-buffer (current-buffer)))))

;;;; lsp-mode

(with-eval-after-load 'lsp-mode
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection '("instructions-lsp"))
    :activation-fn (lsp-activate-on "markdown")
    :server-id 'instructions-lsp
    :add-on? t
    :initialization-options (lambda () '(:profile "dsh")))))

(defun instructions-lsp-effective ()
  "Show the instruction blocks an agent working on this file gets (lsp-mode)."
  (interactive)
  (lsp-request-async
   "instructions/effective" (list :uri (lsp--buffer-uri))
   (lambda (result)
     (with-current-buffer (get-buffer-create "*instructions-effective*")
       (let ((inhibit-read-only t))
         (erase-buffer)
         (insert (lsp-get (lsp-get result :baseline) :rendered))
         (seq-doseq (b (lsp-get result :nested)) (insert "\n\n" (lsp-get b :rendered))))
       (view-mode 1)
       (pop-to-buffer (current-buffer))))))

(defun instructions-lsp-transitions (&optional since)
  "Show the transition log of this file's session after SINCE (lsp-mode)."
  (interactive "P")
  (lsp-request-async
   "instructions/transitions" (list :uri (lsp--buffer-uri) :since (or since 0))
   (lambda (result)
     (with-current-buffer (get-buffer-create "*instructions-transitions*")
       (let ((inhibit-read-only t))
         (erase-buffer)
         (seq-doseq (b (lsp-get result :batches))
           (insert (format "## seq %s · %s\n\n%s\n\n" (lsp-get b :seq) (lsp-get b :reason) (lsp-get b :text)))))
       (view-mode 1)
       (pop-to-buffer (current-buffer))))))

(defun instructions-lsp-touch ()
  "Report the current file as read by an agent (instructions/touch)."
  (interactive)
  (lsp-notify "instructions/touch" (list :uri (lsp--buffer-uri) :kind "read")))

(provide 'instructions-lsp)
;;; instructions-lsp.el ends here
