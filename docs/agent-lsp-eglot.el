;;; agent-lsp-eglot.el --- agent-lsp through eglot -*- lexical-binding: t; -*-

;; The eglot recipe of docs/emacs.md: Emacs 28 with eglot 1.9 (Debian's elpa-eglot) or Emacs 29+.
;; eglot itself syncs the buffers (unsaved text included), applies the agent's edits
;; (workspace/applyEdit) and asks the "Allow once / Allow always / Reject" questions
;; (window/showMessageRequest).  This file adds a chat: M-x agent-lsp-chat, M-x agent-lsp-stop.
;;
;; Set the variables below before loading this file.

(require 'eglot)
(require 'cl-lib)

(defvar agent-lsp-command '("agent-lsp")
  "The server command, e.g. (\"agent-lsp\" \"--model\" \"demo\") for the offline demo model.")

(defvar agent-lsp-modes '(python-mode)
  "Major modes whose eglot server is agent-lsp.
eglot 1.9 runs one server per buffer: these modes lose their usual language server.")

(defvar agent-lsp-permission-mode nil
  "Permission mode of the chats: \"default\", \"acceptEdits\", \"plan\", \"bypassPermissions\".
nil leaves it to the server's settings.")

(add-to-list 'eglot-server-programs (cons agent-lsp-modes agent-lsp-command))

(defvar agent-lsp--server nil "The eglot server of the chat.")
(defvar agent-lsp--session nil "The chat's session id: later messages continue it.")

(defun agent-lsp--insert (&rest strings)
  "Append STRINGS to the *agent-lsp* buffer."
  (with-current-buffer (get-buffer-create "*agent-lsp*")
    (let ((inhibit-read-only t))
      (goto-char (point-max))
      (apply #'insert strings))))

(defun agent-lsp--line (&rest strings)
  "Append STRINGS as a line of their own."
  (with-current-buffer (get-buffer-create "*agent-lsp*")
    (apply #'agent-lsp--insert (if (bolp) "" "\n") (append strings '("\n")))))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql agent/update)) &key sessionId update &allow-other-keys)
  "Draw one streamed update of the chat."
  (setq agent-lsp--session (or agent-lsp--session sessionId))  ; a new session's id comes first here
  (pcase (plist-get update :kind)
    ("text_delta" (agent-lsp--insert (plist-get update :text)))
    ("tool_call" (agent-lsp--line "● " (plist-get update :title)))
    ("tool_call_update"
     (let ((status (plist-get update :status)))
       (when (member status '("completed" "failed" "rejected" "cancelled"))
         (agent-lsp--line "  " status))))
    ("notice" (agent-lsp--line "! " (plist-get update :message)))))

(defun agent-lsp--path-to-uri (file)
  "FILE as a URI (the function's name changed in eglot 1.16)."
  (funcall (if (fboundp 'eglot-path-to-uri) 'eglot-path-to-uri 'eglot--path-to-uri) file))

(defun agent-lsp-chat (message)
  "Send MESSAGE to agent-lsp; the answer streams into the *agent-lsp* buffer."
  (interactive "sAsk agent-lsp: ")
  (unless (eq (current-buffer) (get-buffer "*agent-lsp*"))
    (setq agent-lsp--server (eglot--current-server-or-lose)))
  (agent-lsp--line "> " message)
  (display-buffer "*agent-lsp*")
  (jsonrpc-async-request
   agent-lsp--server :agent/chat
   (append (list :message message)
           (and agent-lsp--session (list :sessionId agent-lsp--session))
           (and agent-lsp-permission-mode (list :permissionMode agent-lsp-permission-mode))
           (and buffer-file-name (list :context (list :activeUri (agent-lsp--path-to-uri buffer-file-name)))))
   :success-fn (lambda (result)
                 (setq agent-lsp--session (plist-get result :sessionId))
                 (agent-lsp--line "-- " (plist-get result :stopReason)
                                  (let ((err (plist-get result :error)))
                                    (if err (concat ": " (plist-get err :message)) ""))))
   :error-fn (lambda (err) (agent-lsp--line "-- request failed: " (plist-get err :message)))
   :timeout nil))                       ; a chat takes as long as it takes: no 10 s default

(defun agent-lsp-stop ()
  "Stop the running chat."
  (interactive)
  (when agent-lsp--session
    (jsonrpc-async-request agent-lsp--server :agent/abort (list :sessionId agent-lsp--session)
                           :success-fn #'ignore)))

(defun agent-lsp-new-session ()
  "Start a new session with the next message."
  (interactive)
  (setq agent-lsp--session nil))

(provide 'agent-lsp-eglot)
;;; agent-lsp-eglot.el ends here
