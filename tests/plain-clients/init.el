;;; init.el --- Emacs with lsp-mode (Debian's elpa-lsp-mode) and agent-lsp as a second server for Python -*- lexical-binding: t -*-
;; The lsp-mode recipe of docs/plain-clients.md, nothing of agent-lsp's own Emacs package; run.sh starts
;; `emacs -nw -q -l init.el` under tmux with PLAIN_ROOT (the project) and PLAIN_STATE (lsp-mode's and agent-lsp's
;; state) set.
(setq native-comp-deferred-compilation nil          ; no compiling (and warnings) in the background
      native-comp-async-report-warnings-errors nil)
(package-initialize)                     ; Debian's elpa packages with their autoloads
(require 'lsp-mode)
(setq lsp-client-packages nil            ; only the servers registered below, no prompts to install others
      lsp-response-timeout 600           ; workspace/executeCommand answers when the whole chat has ended
      lsp-auto-execute-action nil        ; always show the list of actions, even of one
      lsp-enable-file-watchers nil
      lsp-headerline-breadcrumb-enable nil
      lsp-session-file (expand-file-name "lsp-session" (getenv "PLAIN_STATE"))
      inhibit-startup-screen t
      make-backup-files nil)
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection
                   (lambda () (list "agent-lsp" "--data-dir" (expand-file-name "agent-lsp" (getenv "PLAIN_STATE")))))
  :activation-fn (lsp-activate-on "python")
  :server-id 'agent-lsp
  :notification-handlers (ht ("agent/update" #'ignore)) ; the chat's stream, for agent-lsp's own clients
  :add-on? t))                           ; beside the language's own server (pylsp, pyright...), not instead
(lsp-workspace-folders-add (getenv "PLAIN_ROOT"))
(add-hook 'python-mode-hook #'lsp)
